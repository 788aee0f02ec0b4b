#include "core/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/error.h"

namespace potop {

namespace {

constexpr const char* kLockFile = ".potop-lock";

// The holder's note in the lock file ("process PID (COMMAND, started TIME)").
std::string holder_of(int fd) {
  char holder[512] = {};
  const ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
  std::string who(holder, n > 0 ? size_t(n) : 0);
  while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
  return who.empty() ? std::string("another process") : who;
}

Error in_use(const std::filesystem::path& dir, const std::string& who) {
  return Error(dir.string() + " is in use by " + who + "; wait for it to finish, or stop it");
}

}  // namespace

void DirectoryLock::refuse_in_use(const std::filesystem::path& dir) {
  const int fd = ::open((dir / kLockFile).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // no lock file: no run ever locked it
  // A shared lock conflicts with the writer's exclusive one; released again at close.
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  const std::string who = held ? holder_of(fd) : "";
  ::close(fd);
  if (held) throw in_use(dir, who);
}

DirectoryLock::DirectoryLock(const std::filesystem::path& dir, const std::string& command) {
  const std::filesystem::path path = dir / kLockFile;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(path.string() + ": cannot open the lock file (" + std::strerror(errno) + ")");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string who = error == EWOULDBLOCK ? holder_of(fd_) : "";
    ::close(fd_);
    fd_ = -1;
    if (error != EWOULDBLOCK) throw Error(path.string() + ": cannot lock it (" + std::strerror(error) + ")");
    throw in_use(dir, who);
  }
  // Who holds it, for the message another writer gets.
  const std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  const std::string who = "process " + std::to_string(::getpid()) + " (" + command + ", started " + when + ")\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, who.data(), who.size(), 0) != static_cast<ssize_t>(who.size())) {
    // The lock holds without the note; the other writer's message is then vaguer.
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace potop
