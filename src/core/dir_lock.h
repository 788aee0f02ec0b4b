// One writer per directory: an exclusive lock on a directory a process writes (flock on
// DIR/.potop-lock), held while the object lives. The kernel drops it when the process ends, so a
// run that was killed never leaves one behind; readers (potop sample, serve, info) take none.
#pragma once
#include <filesystem>
#include <string>

namespace potop {

class DirectoryLock {
 public:
  // Takes the lock, recording this process (its pid, `command`, the time). Throws potop::Error
  // "DIR is in use by process PID (COMMAND, started TIME)" when another process holds it.
  DirectoryLock(const std::filesystem::path& dir, const std::string& command);
  ~DirectoryLock();
  // Throws the Error above when a process holds the lock on `dir`, and otherwise does nothing
  // (it creates no lock file): for saying that a run is in use, rather than guessing from its
  // files (a run in its first evaluation has no checkpoint yet).
  static void refuse_in_use(const std::filesystem::path& dir);
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace potop
