#include "data/prepared_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "core/safetensors.h"
#include "tokenizer/tokenizer.h"

namespace potop {

namespace fs = std::filesystem;

std::string to_string(DataSplit s) { return s == DataSplit::kTrain ? "train" : "val"; }

namespace {

// A split as pieces with the split-relative index of each piece's first token.
struct SplitIndex {
  std::vector<SplitPiece> pieces;
  std::vector<uint64_t> starts;
  uint64_t size = 0;
};

SplitIndex index_split(const SplitInfo& s) {
  SplitIndex x;
  x.pieces = s.pieces;
  for (const SplitPiece& p : s.pieces) {
    x.starts.push_back(x.size);
    x.size += p.tokens;
  }
  return x;
}

struct Window {
  size_t shard = 0;
  uint64_t index = 0;  // window number within the shard
  const unsigned char* data = nullptr;
  size_t bytes = 0;
  uint64_t used = 0;  // the read clock at its last use
};

std::string errno_text() { return std::strerror(errno); }

// Size of a shard file as data.json describes it: refuses a missing, non-regular, truncated or
// extended file, naming it.
void check_shard_size(const fs::path& path, uint64_t expected, uint64_t tokens, int width) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) throw Error(path.string() + ": shard missing (data.json lists it)");
    throw Error(path.string() + ": cannot access shard: " + errno_text());
  }
  if (!S_ISREG(st.st_mode)) throw Error(path.string() + ": shard is not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size != expected)
    throw Error(path.string() + ": " + (size < expected ? "truncated" : "longer than data.json says") + ": " +
                std::to_string(size) + " bytes, but data.json lists " + std::to_string(tokens) + " tokens of " +
                std::to_string(width) + " bytes = " + std::to_string(expected) + " bytes");
}

uint64_t file_checksum(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path.string() + ": cannot open shard: " + errno_text());
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<unsigned char> buf(size_t{1} << 20);
  Xxh64 hash;
  for (;;) {
    const ssize_t r = ::read(fd, buf.data(), buf.size());
    if (r < 0) {
      if (errno == EINTR) continue;
      const std::string why = errno_text();
      ::close(fd);
      throw Error(path.string() + ": cannot read shard: " + why);
    }
    if (r == 0) break;
    hash.update(buf.data(), static_cast<size_t>(r));
  }
  ::close(fd);
  return hash.digest();
}

}  // namespace

struct PreparedData::Impl {
  fs::path dir;
  DataManifest m;
  Options options;
  int width = 2;
  std::vector<fs::path> paths;
  SplitIndex train, val;

  mutable std::mutex mu;
  mutable std::vector<Window> windows;
  mutable uint64_t clock = 0;
  mutable size_t mapped = 0, peak = 0;

  ~Impl() {
    for (const Window& w : windows) ::munmap(const_cast<unsigned char*>(w.data), w.bytes);
  }

  const SplitIndex& split(DataSplit s) const { return s == DataSplit::kTrain ? train : val; }

  // The mapped window `index` of a shard (mapping it, and unmapping the least recently used
  // one when max_windows are mapped). Called with mu held.
  const Window& window(size_t shard, uint64_t index) const {
    ++clock;
    for (Window& w : windows)
      if (w.shard == shard && w.index == index) {
        w.used = clock;
        return w;
      }
    if (static_cast<int>(windows.size()) >= options.max_windows) {
      auto lru = std::min_element(windows.begin(), windows.end(), [](const Window& a, const Window& b) { return a.used < b.used; });
      ::munmap(const_cast<unsigned char*>(lru->data), lru->bytes);
      mapped -= lru->bytes;
      windows.erase(lru);
    }
    const fs::path& path = paths[shard];
    const uint64_t expected = m.shards[shard].tokens * static_cast<uint64_t>(width);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(path.string() + ": cannot open shard: " + errno_text());
    struct stat st {};
    if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != expected) {
      ::close(fd);
      throw Error(path.string() + ": changed since it was opened (" + std::to_string(st.st_size) + " bytes, data.json says " +
                  std::to_string(expected) + "); prepare the data again");
    }
    const uint64_t offset = index * options.window_bytes;
    POTOP_CHECK(offset < expected, "window past the end of its shard");
    const size_t bytes = static_cast<size_t>(std::min<uint64_t>(options.window_bytes, expected - offset));
    void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset));
    const std::string why = p == MAP_FAILED ? errno_text() : std::string();
    ::close(fd);
    if (p == MAP_FAILED)
      throw Error(path.string() + ": cannot map " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                  ": " + why);
    windows.push_back({shard, index, static_cast<const unsigned char*>(p), bytes, clock});
    mapped += bytes;
    peak = std::max(peak, mapped);
    return windows.back();
  }

  // Ids [first, first + n) of one shard into out. Called with mu held.
  void read_shard(size_t shard, uint64_t first, size_t n, int* out) const {
    const uint64_t W = options.window_bytes;
    uint64_t byte = first * static_cast<uint64_t>(width);
    while (n > 0) {
      const Window& w = window(shard, byte / W);
      const size_t at = static_cast<size_t>(byte % W);
      const size_t take = std::min(n, (w.bytes - at) / static_cast<size_t>(width));
      POTOP_CHECK(take > 0, "a window holds no whole id");
      const unsigned char* p = w.data + at;
      for (size_t i = 0; i < take; ++i) {
        uint32_t v;
        if (width == 2) {
          uint16_t h;
          std::memcpy(&h, p + 2 * i, 2);
          if constexpr (std::endian::native == std::endian::big) h = static_cast<uint16_t>(h << 8 | h >> 8);
          v = h;
        } else {
          std::memcpy(&v, p + 4 * i, 4);
          if constexpr (std::endian::native == std::endian::big)
            v = (v << 24) | ((v << 8) & 0xff0000u) | ((v >> 8) & 0xff00u) | (v >> 24);
        }
        if (v >= static_cast<uint32_t>(m.vocab_size))
          throw Error(paths[shard].string() + ": token " + std::to_string(byte / width + i) + " is id " + std::to_string(v) +
                      ", outside the vocabulary of " + std::to_string(m.vocab_size) + " tokens (a corrupted shard?)");
        out[i] = static_cast<int>(v);
      }
      out += take;
      n -= take;
      byte += take * static_cast<uint64_t>(width);
    }
  }
};

PreparedData::PreparedData(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PreparedData::PreparedData(PreparedData&&) noexcept = default;
PreparedData& PreparedData::operator=(PreparedData&&) noexcept = default;
PreparedData::~PreparedData() = default;

const DataManifest& PreparedData::manifest() const { return impl_->m; }
const fs::path& PreparedData::dir() const { return impl_->dir; }
uint64_t PreparedData::size(DataSplit split) const { return impl_->split(split).size; }

size_t PreparedData::peak_mapped_bytes() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->peak;
}

bool is_data_directory(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec);
}

PreparedData PreparedData::open(const fs::path& dir, const Options& options) {
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (st.type() == fs::file_type::not_found) throw Error(dir.string() + ": data directory not found");
  if (st.type() != fs::file_type::directory)
    throw Error(dir.string() + ": not a directory (expected a data directory written by potop prepare)");
  const fs::path file = dir / kDataFile;
  if (!fs::exists(file, ec))
    throw Error(dir.string() + ": not a prepared data directory (no " + kDataFile + "); potop prepare writes one");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(file));
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(file.string() + ": not valid JSON (error at byte " + std::to_string(e.byte) +
                "); the file is corrupted: prepare the data again");
  }
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  impl->m = manifest_from_json(j, file.string());
  impl->options = options;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  POTOP_CHECK(options.max_windows >= 1 && options.window_bytes >= 1, "bad mapping options");
  impl->options.window_bytes = (options.window_bytes + page - 1) / page * page;
  impl->width = id_bytes(impl->m.ids);
  for (const ShardInfo& s : impl->m.shards) {
    const fs::path path = dir / s.file;
    check_shard_size(path, s.tokens * static_cast<uint64_t>(impl->width), s.tokens, impl->width);
    impl->paths.push_back(path);
  }
  if (options.verify_checksums) {
    for (size_t i = 0; i < impl->m.shards.size(); ++i) {
      const uint64_t got = file_checksum(impl->paths[i]);
      if (got != impl->m.shards[i].checksum)
        throw Error(impl->paths[i].string() + ": corrupted: its checksum is " + checksum_string(got) +
                    ", data.json says " + checksum_string(impl->m.shards[i].checksum) + "; prepare the data again");
    }
  }
  impl->train = index_split(impl->m.train);
  impl->val = index_split(impl->m.val);
  return PreparedData(std::move(impl));
}

void PreparedData::read(DataSplit split, uint64_t begin, size_t n, int* out) const {
  const SplitIndex& s = impl_->split(split);
  POTOP_CHECK(begin <= s.size && n <= s.size - begin, "read past the end of the split");
  if (n == 0) return;
  std::lock_guard<std::mutex> lock(impl_->mu);
  // The piece holding token `begin`: the last one starting at or before it.
  size_t p = static_cast<size_t>(std::upper_bound(s.starts.begin(), s.starts.end(), begin) - s.starts.begin()) - 1;
  while (n > 0) {
    const SplitPiece& piece = s.pieces[p];
    const uint64_t within = begin - s.starts[p];
    const size_t take = static_cast<size_t>(std::min<uint64_t>(n, piece.tokens - within));
    impl_->read_shard(piece.shard, piece.begin + within, take, out);
    out += take;
    n -= take;
    begin += take;
    ++p;
  }
}

uint64_t PreparedData::content_hash() const {
  nlohmann::json j = to_json(impl_->m);
  j.erase("source");  // the same data named by another path is the same data
  j.erase("files");
  return fnv1a64(j.dump());
}

void check_tokenizer(const PreparedData& data, const Tokenizer& tokenizer, std::string_view whose) {
  const DataManifest& m = data.manifest();
  if (m.tokenizer_kind == tokenizer.kind() && m.vocab_size == tokenizer.size() && m.tokenizer_hash == tokenizer.hash())
    return;
  auto describe = [](const std::string& kind, int size, uint64_t hash) {
    return "the " + kind + " tokenizer of " + std::to_string(size) + " tokens (hash " + hash_hex(hash) + ")";
  };
  throw Error(data.dir().string() + ": prepared with " + describe(m.tokenizer_kind, m.vocab_size, m.tokenizer_hash) +
              ", but " + std::string(whose) + " is " + describe(tokenizer.kind(), tokenizer.size(), tokenizer.hash()) +
              "; prepare the data again with that tokenizer (potop prepare --tokenizer)");
}

void check_block_size(const PreparedData& data, int block_size) {
  if (block_size < 1) throw Error("--block-size must be at least 1, got " + std::to_string(block_size));
  const uint64_t need = static_cast<uint64_t>(block_size) + 1;
  const uint64_t n_train = data.size(DataSplit::kTrain), n_val = data.size(DataSplit::kVal);
  const std::string dir = data.dir().string();
  if (n_train < need)
    throw Error(dir + ": the training split has " + std::to_string(n_train) +
                " tokens, but one window needs --block-size + 1 = " + std::to_string(need) +
                "; prepare more data or use a smaller --block-size");
  if (n_val > 0 && n_val < need)
    throw Error(dir + ": the validation split has " + std::to_string(n_val) +
                " tokens, but one window needs --block-size + 1 = " + std::to_string(need) +
                "; prepare the data with a larger --val-fraction (or 0) or use a smaller --block-size");
}

}  // namespace potop
