// Files that are either wholly written or not touched at all.
//
// write_file_atomic writes "<path>.tmp-<pid>" beside the target, fsyncs it, renames it over the
// target and fsyncs the directory. If anything fails (the directory is missing or read-only, the
// disk is full, a file-size limit is hit, fsync reports an I/O error, the writer callback throws)
// the temporary file is removed, the previous file is left exactly as it was, and a potop::Error
// naming the path and the reason is thrown. A file-size limit (RLIMIT_FSIZE) becomes an Error
// too: SIGXFSZ is blocked in the writing thread for the duration, so it cannot kill the process.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace potop {

// A piece of memory to write, not owned: large buffers are written where they lie.
struct ByteChunk {
  const void* data = nullptr;
  size_t size = 0;
};

// Where a writer callback puts its bytes. Small writes are buffered; large ones go straight to
// the file. Every write is checked; a failure throws potop::Error naming the file.
class FileSink {
 public:
  virtual ~FileSink() = default;
  virtual void write(const void* data, size_t size) = 0;
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  // Bytes written so far.
  virtual size_t written() const = 0;
};

using FileWriter = std::function<void(FileSink&)>;

void write_file_atomic(const std::filesystem::path& path, const FileWriter& writer);
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);
void write_file_atomic(const std::filesystem::path& path, const std::vector<ByteChunk>& chunks);

// Files that appear together or not at all (a run's first checkpoint: its weights and its
// training state). While a group lives, write_file_atomic in the same thread writes and syncs each
// file at its temporary name and leaves it there; commit() then renames them all, in the order
// written. A group destroyed uncommitted (a write failed) removes its temporaries, so none of its
// files appears. One group at a time in a thread.
class FileGroup {
 public:
  struct StagedFile {
    std::filesystem::path tmp, path;
  };
  FileGroup();
  ~FileGroup();
  FileGroup(const FileGroup&) = delete;
  FileGroup& operator=(const FileGroup&) = delete;
  void commit();

 private:
  std::vector<StagedFile> written_;
};

// Before a command writes a file at a path the user named with `flag` ("--out"): a file already
// there is not the command's to replace, so it is refused unless `force`; and even with it, a file
// in a model's directory (one holding config.json) is refused, as the model would no longer load
// or would lose its notes. Also refused: a directory, and a parent directory that is missing.
// `inputs` are the files the command reads, each with its flag ("-m"): no command writes over its
// own input, --force or not (the same file by another spelling or a link counts too).
struct NamedInput {
  std::string flag;
  std::filesystem::path path;
};
void check_output_file(const std::filesystem::path& path, const std::string& flag, bool force,
                       const std::vector<NamedInput>& inputs = {});
// Refuses to write `path` when it is one of `inputs`, with "<subject> the file <flag> names, which
// this command reads; ... choose another <out_flag>" (subject: "--out dir: its vocab.txt is"). The
// one rule behind check_output_file and every command that writes a directory.
void refuse_writing_over_input(const std::filesystem::path& path, const std::string& out_flag,
                               const std::string& subject, const std::vector<NamedInput>& inputs);

// --force's rule for a directory the user named: a command replaces the files it writes there
// (`owned`, their names) and keeps every other file -- a user's own, a model one level down. `fill`
// writes the new files into a hidden sibling directory; each is then renamed into `dir`, an owned
// file `fill` did not write again is removed, and the sibling goes. `dir` must exist.
void replace_owned_files(const std::filesystem::path& dir,
                         const std::function<void(const std::filesystem::path& staging)>& fill,
                         const std::vector<std::string>& owned);

// A new directory, written as a whole or not at all: `fill` writes its files into a hidden sibling
// (".<name>.tmp-<pid>" beside it), which is then renamed to `dir` (replacing an empty directory
// there) and its parent synced. On any failure the sibling is removed and the error passed on.
// `dir` must not exist or be an empty directory (the caller says why otherwise).
void write_directory_atomic(const std::filesystem::path& dir,
                            const std::function<void(const std::filesystem::path& staging)>& fill);

// The whole file. Errors name the path: missing, a directory, unreadable.
std::string read_file(const std::filesystem::path& path);
// A file mapped read-only into memory (mmap): its pages are read from disk as they are touched
// and belong to the page cache, so a large file costs no copy. Errors as read_file's.
class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  // Hands the whole pages inside [offset, offset + bytes) back to the kernel (they are read
  // again if touched): a reader done with a part keeps its resident memory small.
  void release(size_t offset, size_t bytes) const;

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// The file parsed as JSON; invalid JSON is an Error naming the path too.
nlohmann::json read_json_file(const std::filesystem::path& path);

// Creates the directory (and its parents) if missing, then proves it is writable by creating and
// removing a probe file. Throws potop::Error naming the path if it is a regular file, cannot be
// created, or cannot be written.
void ensure_writable_directory(const std::filesystem::path& path);

}  // namespace potop
