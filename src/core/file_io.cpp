#include "core/file_io.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/error.h"

namespace potop {

namespace fs = std::filesystem;

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Blocks SIGXFSZ in this thread while a file is written, so exceeding RLIMIT_FSIZE makes
// write() fail with EFBIG instead of killing the process. If our own write raised the signal,
// it is consumed before the old mask comes back.
class BlockFileSizeSignal {
 public:
  BlockFileSizeSignal() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~BlockFileSizeSignal() {
    if (raised_ && !sigismember(&old_, SIGXFSZ)) {
      sigset_t pending;
      sigemptyset(&pending);
      if (sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ)) {
        const timespec zero{0, 0};
        while (sigtimedwait(&set_, nullptr, &zero) < 0 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  BlockFileSizeSignal(const BlockFileSizeSignal&) = delete;
  BlockFileSizeSignal& operator=(const BlockFileSizeSignal&) = delete;

  void note_raised() { raised_ = true; }

 private:
  sigset_t set_{};
  sigset_t old_{};
  bool raised_ = false;
};

class FdSink final : public FileSink {
 public:
  FdSink(int fd, const fs::path& target, BlockFileSizeSignal& signal)
      : fd_(fd), target_(target), signal_(signal) {
    buffer_.reserve(kBufferBytes);
  }

  void write(const void* data, size_t size) override {
    const char* p = static_cast<const char*>(data);
    if (size >= kBufferBytes / 2) {
      flush();
      write_all(p, size);
    } else {
      if (buffer_.size() + size > kBufferBytes) flush();
      buffer_.insert(buffer_.end(), p, p + size);
    }
    written_ += size;
  }
  using FileSink::write;

  size_t written() const override { return written_; }

  void flush() {
    if (buffer_.empty()) return;
    write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
  }

 private:
  static constexpr size_t kBufferBytes = size_t{1} << 20;
  static constexpr size_t kMaxWrite = size_t{1} << 30;  // Linux caps one write() near 2 GiB

  void write_all(const char* p, size_t n) {
    while (n > 0) {
      const ssize_t r = ::write(fd_, p, std::min(n, kMaxWrite));
      if (r < 0) {
        const int err = errno;
        if (err == EINTR) continue;
        if (err == EFBIG) signal_.note_raised();
        throw Error(target_.string() + ": write failed: " + errno_text(err) +
                    " (the previous file, if any, is unchanged)");
      }
      if (r == 0) {
        throw Error(target_.string() + ": write failed: no progress (the previous file, if any, is unchanged)");
      }
      p += r;
      n -= static_cast<size_t>(r);
    }
  }

  int fd_;
  const fs::path& target_;
  BlockFileSizeSignal& signal_;
  std::vector<char> buffer_;
  size_t written_ = 0;
};

// The temporaries of the FileGroup open in this thread (null: write_file_atomic renames at once).
thread_local std::vector<FileGroup::StagedFile>* t_group = nullptr;

void rename_into_place(const fs::path& tmp, const fs::path& path) {
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error(path.string() + ": cannot replace it with " + tmp.string() + ": " + errno_text(errno));
}

void sync_directory(const fs::path& target) {
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    throw Error(target.string() + ": written, but its directory could not be opened to sync it: " +
                errno_text(errno));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems cannot sync a directory; the rename is as durable as they allow.
  if (rc != 0 && err != EINVAL && err != ENOTSUP) {
    throw Error(target.string() + ": written, but syncing its directory failed: " + errno_text(err));
  }
}

}  // namespace

void write_file_atomic(const fs::path& path, const FileWriter& writer) {
  fs::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());

  BlockFileSizeSignal signal;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    throw Error(path.string() + ": cannot create temporary file " + tmp.string() + ": " + errno_text(errno));
  }
  try {
    FdSink sink(fd, path, signal);
    writer(sink);
    sink.flush();
    if (::fsync(fd) != 0) throw Error(path.string() + ": fsync failed: " + errno_text(errno));
    const int rc = ::close(fd);
    fd = -1;
    if (rc != 0) throw Error(path.string() + ": close failed: " + errno_text(errno));
    if (t_group) {  // renamed with the group's other files by FileGroup::commit
      t_group->push_back({tmp, path});
      return;
    }
    rename_into_place(tmp, path);
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  sync_directory(path);
}

FileGroup::FileGroup() {
  POTOP_CHECK(t_group == nullptr, "FileGroup: one group at a time in a thread");
  t_group = &written_;
}

FileGroup::~FileGroup() {
  t_group = nullptr;
  for (const StagedFile& f : written_) ::unlink(f.tmp.c_str());
}

void FileGroup::commit() {
  t_group = nullptr;
  // Renames do not allocate: once every file is written, none of them fails for want of space.
  // A failed rename leaves the files before it in place; the destructor removes the others.
  for (const StagedFile& f : written_) rename_into_place(f.tmp, f.path);
  if (!written_.empty()) sync_directory(written_.back().path);
  written_.clear();
}

void refuse_writing_over_input(const fs::path& path, const std::string& out_flag, const std::string& subject,
                               const std::vector<NamedInput>& inputs) {
  std::error_code ec;
  for (const NamedInput& input : inputs)
    if (!input.path.empty() && fs::equivalent(path, input.path, ec))
      throw Error(subject + " the file " + input.flag + " names, which this command reads; it never writes over "
                  "its input, --force or not: choose another " + out_flag);
}

void check_output_file(const fs::path& path, const std::string& flag, bool force, const std::vector<NamedInput>& inputs) {
  const std::string named = flag + " " + path.string();
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) throw Error(named + ": is a directory; give the file to write");
  if (fs::exists(st)) refuse_writing_over_input(path, flag, named + ": is", inputs);
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (!fs::is_directory(dir, ec)) throw Error(named + ": directory " + dir.string() + " does not exist");
  if (!fs::exists(st)) return;
  if (!force) throw Error(named + ": exists; replace it with --force, or choose another " + flag);
  if (fs::exists(dir / "config.json", ec))
    throw Error(named + ": is in " + dir.string() + ", a model's directory (it holds config.json), whose files "
                "potop does not replace; choose another " + flag);
}

void write_file_atomic(const fs::path& path, std::string_view bytes) {
  write_file_atomic(path, [&](FileSink& sink) { sink.write(bytes.data(), bytes.size()); });
}

void write_file_atomic(const fs::path& path, const std::vector<ByteChunk>& chunks) {
  write_file_atomic(path, [&](FileSink& sink) {
    for (const auto& c : chunks) sink.write(c.data, c.size);
  });
}

namespace {

// The hidden sibling ".<name>.tmp-<pid>" a directory's new files are written into, created empty.
fs::path create_staging_directory(const fs::path& dir) {
  const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
  std::string hidden(1, '.');  // appended piece by piece: "." + string trips GCC 12's -Wrestrict
  hidden.append(dir.filename().string()).append(".tmp-").append(std::to_string(::getpid()));
  const fs::path staging = parent / hidden;
  std::error_code ec;
  fs::remove_all(staging, ec);
  if (!fs::create_directory(staging, ec) || ec)
    throw Error(staging.string() + ": cannot create the directory: " + (ec ? ec.message() : "it exists"));
  return staging;
}

}  // namespace

void replace_owned_files(const fs::path& dir, const std::function<void(const fs::path& staging)>& fill,
                         const std::vector<std::string>& owned) {
  const fs::path staging = create_staging_directory(dir.has_filename() ? dir : dir.parent_path());
  std::error_code ec;
  try {
    fill(staging);
    for (const auto& entry : fs::directory_iterator(staging)) {
      const std::string name = entry.path().filename().string();
      POTOP_CHECK(std::find(owned.begin(), owned.end(), name) != owned.end(), "a file the command does not own: " + name);
    }
    for (const std::string& name : owned) {
      if (fs::exists(staging / name, ec)) rename_into_place(staging / name, dir / name);
      else if (fs::is_regular_file(fs::symlink_status(dir / name, ec))) fs::remove(dir / name, ec);
    }
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  fs::remove_all(staging, ec);
  sync_directory(dir / owned.front());
}

void write_directory_atomic(const fs::path& dir, const std::function<void(const fs::path& staging)>& fill) {
  const fs::path staging = create_staging_directory(dir);
  std::error_code ec;
  try {
    fill(staging);
    fs::rename(staging, dir, ec);
    if (ec) throw Error(dir.string() + ": cannot rename " + staging.filename().string() + " to it: " + ec.message());
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  sync_directory(dir);
}

namespace {

// The file opened for reading, and its status; errors name it (missing, unreadable, a directory).
int open_for_reading(const fs::path& path, struct stat& st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path.string() + ": cannot open: " + errno_text(errno));
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error(path.string() + ": cannot stat: " + errno_text(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(path.string() + ": is a directory, not a file");
  }
  return fd;
}

}  // namespace

std::string read_file(const fs::path& path) {
  struct stat st {};
  const int fd = open_for_reading(path, st);
  std::string out;
  // st_size is a hint (0 for pipes and /proc files); keep reading to end of file regardless.
  out.resize(std::max<size_t>(static_cast<size_t>(st.st_size) + 1, 4096));
  size_t filled = 0;
  for (;;) {
    if (filled == out.size()) out.resize(out.size() * 2);
    const ssize_t r = ::read(fd, out.data() + filled, out.size() - filled);
    if (r < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      ::close(fd);
      throw Error(path.string() + ": read failed: " + errno_text(err));
    }
    if (r == 0) break;
    filled += static_cast<size_t>(r);
  }
  ::close(fd);
  out.resize(filled);
  return out;
}

void ensure_writable_directory(const fs::path& path) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec && st.type() != fs::file_type::not_found) {
    throw Error(path.string() + ": cannot inspect directory: " + ec.message());
  }
  if (fs::exists(st) && !fs::is_directory(st)) {
    throw Error(path.string() + ": exists but is not a directory");
  }
  if (!fs::exists(st)) {
    fs::create_directories(path, ec);
    if (ec) throw Error(path.string() + ": cannot create directory: " + ec.message());
  }
  const fs::path probe = path / (".potop-write-probe-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw Error(path.string() + ": directory is not writable: " + errno_text(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

MappedFile::MappedFile(const fs::path& path) {
  struct stat st {};
  const int fd = open_for_reading(path, st);
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path.string() + ": is not a regular file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw Error(path.string() + ": cannot map: " + errno_text(err));
    }
    data_ = static_cast<const char*>(p);
  }
  ::close(fd);  // the mapping keeps the file
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<char*>(data_), size_);
}

void MappedFile::release(size_t offset, size_t bytes) const {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t begin = (offset + page - 1) / page * page, end = std::min(offset + bytes, size_) / page * page;
  if (data_ && begin < end) ::madvise(const_cast<char*>(data_) + begin, end - begin, MADV_DONTNEED);
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(path.string() + ": not valid JSON");
  return j;
}

}  // namespace potop
