// The input of `potop prepare`: which files a corpus is, and reading each one in chunks that a
// tokenizer can encode independently.
//
// A corpus is one text file, or every regular file under a directory (recursively, following
// symbolic links to files but not to directories), in byte order of their paths relative to it;
// names starting with '.' (and everything under such a directory) are left out, as are empty
// files. Each file must be UTF-8 text.
//
// Chunks end at a line boundary: a chunk is at most max_bytes long and ends just after its last
// newline; only a line longer than max_bytes is cut elsewhere — before its last space or tab, or
// failing that before its last character — so a token is never cut unless a single word is longer
// than a chunk. A leading byte-order mark is dropped.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace potop {

struct CorpusFile {
  std::filesystem::path path;
  std::string name;  // for messages and data.json: --data FILE, or --data DIR / relative path
  uint64_t bytes = 0;
};

struct CorpusListing {
  std::vector<CorpusFile> files;
  bool directory = false;
  uint64_t bytes = 0;          // of all files
  size_t skipped_empty = 0;    // empty files left out of a directory
  size_t skipped_hidden = 0;   // hidden entries ('.' names) left out
  size_t skipped_special = 0;  // entries neither regular files nor directories (pipes, sockets, devices)
};

// Lists the corpus. Throws potop::Error naming the path: not found; a file that is not regular
// or is empty; a directory that cannot be read or has no usable file (saying what it skipped).
CorpusListing list_corpus(const std::filesystem::path& data);

struct TextChunk {
  size_t file = 0;       // index in the listing
  uint64_t offset = 0;   // byte offset in the file of text[0]
  std::string text;
  bool first = false;    // the file's first chunk
};

// Reads one file chunk by chunk. Errors (the file cannot be opened or read) name the file.
class ChunkReader {
 public:
  ChunkReader(const CorpusFile& file, size_t file_index, size_t max_bytes);
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // The next chunk; false at the end of the file. A file with only a byte-order mark gives one
  // empty first chunk.
  bool next(TextChunk& chunk);
  uint64_t bytes_read() const { return read_; }

 private:
  // Appends up to n bytes from the file to s; false at end of file.
  bool fill(std::string& s, size_t n);

  const CorpusFile& file_;
  size_t index_;
  size_t max_bytes_;
  int fd_ = -1;
  bool eof_ = false, started_ = false;
  uint64_t read_ = 0, offset_ = 0;
  std::string carry_;
};

// Where to end a chunk of `text` (which is max_bytes long and has more after it), as above:
// just after the last '\n'; else at the last ' ' or '\t' (the next chunk starts with it); else
// at the last character's first byte. Returns a value in [1, text.size()].
size_t chunk_cut(const std::string& text);

}  // namespace potop
