#include "data/prepare.h"

#include <fcntl.h>
#include <omp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/file_io.h"
#include "core/threads.h"
#include "data/corpus_files.h"
#include "data/shard_writer.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/utf8.h"

namespace potop {

namespace fs = std::filesystem;

namespace {

std::string format_number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// What encoding one chunk gave, computed in parallel; errors are worded in input order.
struct Encoded {
  std::vector<int> ids;
  uint64_t newlines = 0, characters = 0;
  UnknownReport unknown;
  enum class Problem { kNone, kNul, kUtf8, kOther } problem = Problem::kNone;
  uint64_t at = 0;     // kNul, kUtf8: byte offset in the chunk
  uint64_t line = 0;   // kUtf8: 1-based line in the chunk
  std::string message;  // kUtf8: why; kOther: the whole message
  std::vector<char32_t> chars;  // the vocabulary pass: the chunk's distinct code points
};

// utf8_decode's message is "<source>: invalid UTF-8 at byte offset N (line L): why"
// (tokenizer/utf8.h); the chunk's offset and line are relative to the chunk.
void parse_utf8_error(const std::string& msg, Encoded& e) {
  const std::string at = "at byte offset ", line = " (line ", close = "): ";
  const size_t a = msg.find(at), l = msg.find(line, a == std::string::npos ? 0 : a), c = msg.find(close, l == std::string::npos ? 0 : l);
  if (a == std::string::npos || l == std::string::npos || c == std::string::npos) {
    e.problem = Encoded::Problem::kOther;
    e.message = msg;
    return;
  }
  e.at = std::stoull(msg.substr(a + at.size(), l - a - at.size()));
  e.line = std::stoull(msg.substr(l + line.size(), c - l - line.size()));
  e.message = msg.substr(c + close.size());
}

// Counts the chunk's lines and characters and checks that it is text (no NUL byte, valid
// UTF-8); false, with the problem recorded, when it is not.
bool check_text(const TextChunk& chunk, const std::string& name, Encoded& e) {
  const std::string& t = chunk.text;
  e.newlines = static_cast<uint64_t>(std::count(t.begin(), t.end(), '\n'));
  for (const char c : t) e.characters += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  if (const void* nul = std::memchr(t.data(), 0, t.size())) {
    e.problem = Encoded::Problem::kNul;
    e.at = static_cast<uint64_t>(static_cast<const char*>(nul) - t.data());
    return false;
  }
  if (!utf8_valid(t)) {
    e.problem = Encoded::Problem::kUtf8;
    try {
      utf8_decode(t, name);
    } catch (const Error& err) {
      parse_utf8_error(err.what(), e);
    }
    return false;
  }
  return true;
}

Encoded encode_chunk(const TextChunk& chunk, const std::string& name, const Tokenizer& tokenizer, Unknown unknown) {
  Encoded e;
  if (!check_text(chunk, name, e)) return e;
  try {
    // Unknown text is counted rather than refused here, so that the error can name all of it
    // with lines of the file, not of the chunk.
    const Unknown policy = unknown == Unknown::kError ? Unknown::kSkip : unknown;
    e.ids = tokenizer.encode(chunk.text, name + " (the part at byte offset " + std::to_string(chunk.offset) + ")", policy,
                             &e.unknown);
  } catch (const std::exception& err) {
    e.problem = Encoded::Problem::kOther;
    e.message = err.what();
  }
  return e;
}

// The vocabulary pass: the chunk's distinct code points (what CharTokenizer::from_text collects).
Encoded scan_chunk(const TextChunk& chunk, const std::string& name) {
  Encoded e;
  if (!check_text(chunk, name, e)) return e;
  // A presence table over the BMP (as CharTokenizer::from_text keeps): cheaper than sorting.
  const std::u32string text = utf8_decode(chunk.text, name);
  std::vector<uint8_t> seen(0x10000, 0);
  std::vector<char32_t> astral;
  for (const char32_t c : text) {
    if (c < 0x10000) seen[c] = 1;
    else astral.push_back(c);
  }
  for (char32_t c = 0; c < 0x10000; ++c)
    if (seen[c]) e.chars.push_back(c);
  std::sort(astral.begin(), astral.end());
  astral.erase(std::unique(astral.begin(), astral.end()), astral.end());
  e.chars.insert(e.chars.end(), astral.begin(), astral.end());
  return e;
}

// A chunk that is not text, as the error that names its file, byte offset and line.
void raise_problem(const Encoded& e, const TextChunk& c, const std::string& file, uint64_t lines_before) {
  switch (e.problem) {
    case Encoded::Problem::kNone: return;
    case Encoded::Problem::kNul:
      throw Error(file + ": looks binary (NUL byte at offset " + std::to_string(c.offset + e.at) +
                  "), expected UTF-8 text");
    case Encoded::Problem::kUtf8:
      throw Error(file + ": invalid UTF-8 at byte offset " + std::to_string(c.offset + e.at) + " (line " +
                  std::to_string(lines_before + e.line) + "): " + e.message);
    case Encoded::Problem::kOther: throw Error(e.message);
  }
}

// Reads the corpus's files one after another, a round of up to max_chunks chunks at a time.
class RoundReader {
 public:
  RoundReader(const CorpusListing& listing, size_t chunk_bytes, size_t max_chunks)
      : listing_(listing), chunk_bytes_(chunk_bytes), max_chunks_(max_chunks) {}

  // The next round, in input order; false when the corpus is read.
  bool next(std::vector<TextChunk>& chunks) {
    chunks.clear();
    while (chunks.size() < max_chunks_) {
      if (!reader_) {
        if (next_file_ == listing_.files.size()) break;
        reader_ = std::make_unique<ChunkReader>(listing_.files[next_file_], next_file_, chunk_bytes_);
        ++next_file_;
      }
      TextChunk chunk;
      if (!reader_->next(chunk)) {
        reader_.reset();
        continue;
      }
      chunks.push_back(std::move(chunk));
    }
    return !chunks.empty();
  }
  size_t files_done() const { return reader_ ? next_file_ - 1 : next_file_; }

 private:
  const CorpusListing& listing_;
  size_t chunk_bytes_, max_chunks_;
  size_t next_file_ = 0;
  std::unique_ptr<ChunkReader> reader_;
};

// Runs f(i) for every chunk of a round in parallel; an exception becomes the chunk's problem,
// since nothing may leave an OpenMP region.
template <class F>
void parallel_chunks(std::vector<Encoded>& out, size_t n_chunks, F&& f) {
  out.assign(n_chunks, Encoded{});
  const long n = static_cast<long>(n_chunks);
#pragma omp parallel for schedule(dynamic, 1)
  for (long i = 0; i < n; ++i) {
    try {
      out[static_cast<size_t>(i)] = f(static_cast<size_t>(i));
    } catch (const std::exception& err) {
      out[static_cast<size_t>(i)].problem = Encoded::Problem::kOther;
      out[static_cast<size_t>(i)].message = err.what();
    }
  }
}

// The first pass when no tokenizer is given: the char tokenizer of the whole corpus (the
// sorted distinct code points, as CharTokenizer::from_text gives for the text), read in bounded
// rounds like the encoding pass.
CharTokenizer scan_char_vocabulary(const CorpusListing& listing, size_t chunk_bytes,
                                   const std::function<void(const PrepareProgress&)>& progress,
                                   const std::function<bool()>& stop) {
  RoundReader rounds(listing, chunk_bytes, 2 * static_cast<size_t>(get_threads()));
  std::vector<TextChunk> chunks;
  std::vector<Encoded> scanned;
  std::vector<uint8_t> seen(0x110000, 0);
  PrepareProgress p;
  p.phase = "vocabulary";
  p.bytes_total = listing.bytes;
  p.files_total = listing.files.size();
  uint64_t lines_before = 0;
  while (rounds.next(chunks)) {
    parallel_chunks(scanned, chunks.size(),
                    [&](size_t i) { return scan_chunk(chunks[i], listing.files[chunks[i].file].name); });
    for (size_t i = 0; i < chunks.size(); ++i) {
      const TextChunk& c = chunks[i];
      if (c.first) lines_before = 0;
      raise_problem(scanned[i], c, listing.files[c.file].name, lines_before);
      for (const char32_t ch : scanned[i].chars) seen[ch] = 1;
      lines_before += scanned[i].newlines;
      p.bytes_done += c.text.size() + (c.first ? c.offset : 0);
    }
    p.files_done = rounds.files_done();
    if (progress) progress(p);
    if (stop && stop()) throw Error("interrupted while reading the corpus; nothing was written");
  }
  p.files_done = listing.files.size();  // the last file ends after the last round
  if (progress) progress(p);
  std::vector<char32_t> chars;
  for (char32_t ch = 0; ch < seen.size(); ++ch)
    if (seen[ch]) chars.push_back(ch);
  if (chars.empty()) throw Error(listing.files.front().name + ": no text (only byte-order marks)");
  return CharTokenizer(std::move(chars), "the corpus");
}

// The same report with lines counted from the start of the file.
UnknownReport shift_lines(UnknownReport r, uint64_t lines_before) {
  for (auto& item : r.items) item.first_line += static_cast<long>(lines_before);
  return r;
}

void merge(UnknownReport& into, const UnknownReport& r) {
  into.count += r.count;
  for (const auto& item : r.items) {
    auto it = std::find_if(into.items.begin(), into.items.end(), [&](const auto& i) { return i.c == item.c; });
    if (it == into.items.end()) into.items.push_back(item);
    else it->count += item.count;
  }
}

// Whether `inner` is `outer` or lies under it, comparing absolute, normalised paths.
bool inside(const fs::path& inner, const fs::path& outer) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(fs::absolute(inner), ec), b = fs::weakly_canonical(fs::absolute(outer), ec);
  auto ai = a.begin();
  for (auto bi = b.begin(); bi != b.end(); ++bi, ++ai) {
    if (bi->empty()) continue;  // a trailing separator
    if (ai == a.end() || *ai != *bi) return false;
  }
  return true;
}

void sync_dir(const fs::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);  // best effort: some file systems cannot sync a directory
  ::close(fd);
}

// Moves the finished temporary directory to `out`; with `replace`, swaps it with the data
// directory there (atomically where the file system can) and removes the old one.
void commit(const fs::path& tmp, const fs::path& out, bool replace) {
  if (!replace) {
    if (::rename(tmp.c_str(), out.c_str()) != 0)
      throw Error(out.string() + ": cannot rename " + tmp.string() + " to it: " + std::strerror(errno));
  } else if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(tmp);  // now the old data
  } else {
    fs::path old = out;
    old += ".old-" + std::to_string(::getpid());
    if (::rename(out.c_str(), old.c_str()) != 0)
      throw Error(out.string() + ": cannot move the old data directory aside: " + std::strerror(errno));
    if (::rename(tmp.c_str(), out.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      ::rename(old.c_str(), out.c_str());
      throw Error(out.string() + ": cannot rename " + tmp.string() + " to it: " + why);
    }
    fs::remove_all(old);
  }
  sync_dir(out.parent_path());
}

// Refuses an --out that cannot be (re)placed; returns whether it holds a data directory to replace.
bool check_out(const fs::path& out, const fs::path& data, bool force) {
  if (inside(out, data) || inside(data, out))
    throw Error("--out " + out.string() + ": is inside --data " + data.string() +
                " or holds it; write the data directory elsewhere");
  std::error_code ec;
  const fs::file_status st = fs::status(out, ec);
  if (st.type() == fs::file_type::not_found) return false;
  if (ec) throw Error("--out " + out.string() + ": cannot access (" + ec.message() + ")");
  if (st.type() != fs::file_type::directory)
    throw Error("--out " + out.string() + ": exists and is not a directory; choose another --out");
  if (fs::is_empty(out, ec)) return false;
  if (!force)
    throw Error("--out " + out.string() + ": already exists; pass --force to replace it, or choose another --out");
  if (!fs::exists(out / kDataFile, ec))
    throw Error("--out " + out.string() + ": is not a prepared data directory (no " + kDataFile +
                "); --force only replaces one: choose another --out");
  return true;
}

// OUT.partial-PID directories that a killed `potop prepare` left beside OUT: removed when that
// process is gone (a live one, another prepare into OUT, is left alone).
std::vector<std::pair<fs::path, uintmax_t>> remove_stale_partials(const fs::path& out) {
  std::vector<std::pair<fs::path, uintmax_t>> removed;
  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  const std::string prefix = out.filename().string() + ".partial-";
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(parent, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with(prefix) || !e.is_directory(ec)) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    uintmax_t bytes = 0;
    for (const fs::directory_entry& f : fs::recursive_directory_iterator(e.path(), ec))
      if (f.is_regular_file(ec)) bytes += f.file_size(ec);
    if (fs::remove_all(e.path(), ec) != static_cast<uintmax_t>(-1) && !ec)
      removed.emplace_back(out.parent_path() / name, bytes);  // as --out was written
  }
  return removed;
}

}  // namespace

PrepareResult prepare_data(const PrepareOptions& options, const Tokenizer* given,
                           const std::function<void(const PrepareProgress&)>& progress,
                           const std::function<bool()>& stop) {
  // 1. Everything that can be refused before reading or writing.
  const double f = options.val_fraction;
  if (!(f >= 0.0 && f < 1.0)) throw Error("--val-fraction must be in [0, 1), got " + format_number(f));
  if (options.chunk_bytes < 64) throw Error("--chunk-bytes must be at least 64, got " + std::to_string(options.chunk_bytes));
  const CorpusListing listing = list_corpus(options.data);
  fs::path out = options.out;
  if (out.empty()) throw Error("--out: an empty path");
  if (!out.has_filename()) out = out.parent_path();  // "dir/"
  const bool replace = check_out(out, options.data, options.force);
  const size_t n_files = listing.files.size();
  if (options.split == SplitBy::kDocuments && f > 0) {
    size_t n_val = 0;
    for (size_t i = 0; i < n_files; ++i) n_val += document_in_val(i, f);
    if (n_val == 0 || n_val == n_files)
      throw Error("--split documents: " + options.data.string() + " has " + std::to_string(n_files) + " file" +
                  (n_files == 1 ? "" : "s") + " (documents), and --val-fraction " + format_number(f) + " puts " +
                  (n_val == 0 ? "none in the validation split" : "all of them in the validation split") +
                  "; give a directory of more files, or use --split tail");
  }

  // 2. The tokenizer: the given one, or the char tokenizer of the corpus (a first pass).
  std::optional<CharTokenizer> built;
  if (!given) built.emplace(scan_char_vocabulary(listing, options.chunk_bytes, progress, stop));
  const Tokenizer& tokenizer = given ? *given : *built;
  const IdType id_type = id_type_for(tokenizer.size());
  const uint64_t shard_tokens =
      options.shard_tokens > 0 ? options.shard_tokens : kDefaultShardBytes / static_cast<uint64_t>(id_bytes(id_type));

  // 3. The temporary directory beside --out.
  fs::path parent = out.parent_path();
  std::error_code ec;
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) throw Error("--out " + out.string() + ": cannot create " + parent.string() + " (" + ec.message() + ")");
  }
  const auto stale = remove_stale_partials(out);
  fs::path tmp = out;
  tmp += ".partial-" + std::to_string(::getpid());
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec) || ec)
    throw Error("--out " + out.string() + ": cannot create " + tmp.string() + " (" +
                (ec ? ec.message() : "it exists") + ")");

  PrepareResult result;
  result.out = out;
  result.removed_partials = stale;
  result.replaced = replace;
  result.skipped_empty = listing.skipped_empty;
  result.skipped_hidden = listing.skipped_hidden;
  result.skipped_special = listing.skipped_special;
  DataManifest& m = result.manifest;
  m.tokenizer_kind = tokenizer.kind();
  m.vocab_size = tokenizer.size();
  m.tokenizer_hash = tokenizer.hash();
  m.ids = id_type;
  m.split_by = options.split;
  m.val_fraction = f;
  m.shard_tokens = shard_tokens;
  m.source = options.data.string();
  m.documents = n_files;
  m.bytes = listing.bytes;

  try {
    // 4. Rounds: read up to 2 x threads chunks, encode them in parallel, write them in order.
    const bool by_docs = options.split == SplitBy::kDocuments;
    ShardWriter stream(tmp, by_docs ? "train" : "tokens", id_type, tokenizer.size(), shard_tokens);
    std::optional<ShardWriter> val_stream;
    if (by_docs) val_stream.emplace(tmp, "val", id_type, tokenizer.size(), shard_tokens);
    RoundReader rounds(listing, options.chunk_bytes, 2 * static_cast<size_t>(get_threads()));
    std::vector<uint64_t> file_val(n_files, 0);  // documents split: 1 for a validation document
    m.files.resize(n_files);
    PrepareProgress p;
    p.phase = "tokenize";
    p.bytes_total = listing.bytes;
    p.files_total = n_files;
    uint64_t lines_before = 0;  // of the file whose chunks are being written
    std::vector<TextChunk> chunks;
    std::vector<Encoded> encoded;
    while (rounds.next(chunks)) {
      parallel_chunks(encoded, chunks.size(), [&](size_t i) {
        return encode_chunk(chunks[i], listing.files[chunks[i].file].name, tokenizer, options.unknown);
      });

      for (size_t i = 0; i < chunks.size(); ++i) {
        const TextChunk& c = chunks[i];
        Encoded& e = encoded[i];
        const CorpusFile& file = listing.files[c.file];
        SourceFile& sf = m.files[c.file];
        if (c.first) {
          lines_before = 0;
          sf.path = file.name;
          sf.bytes = file.bytes;
          if (by_docs) file_val[c.file] = document_in_val(c.file, f);
          sf.split = file_val[c.file] ? "val" : "train";
          if (c.text.empty() && !listing.directory)
            throw Error(file.name + ": file holds only a byte-order mark, no text");
        }
        raise_problem(e, c, file.name, lines_before);
        if (e.unknown.count > 0) {
          const UnknownReport r = shift_lines(std::move(e.unknown), lines_before);
          if (options.unknown == Unknown::kError)
            throw Error(file.name + ": " + r.describe() + "; pass --unknown skip or --unknown replace to prepare the rest");
          if (result.unknown.count == 0) result.unknown_file = file.name;
          merge(result.unknown, r);
        }
        (file_val[c.file] ? *val_stream : stream).write(e.ids);
        sf.tokens += e.ids.size();
        sf.characters += e.characters;
        m.characters += e.characters;
        m.tokens += e.ids.size();
        lines_before += e.newlines;
        p.bytes_done += c.text.size() + (c.first ? c.offset : 0);
        p.tokens += e.ids.size();
        std::vector<int>().swap(e.ids);
      }
      p.files_done = rounds.files_done();
      if (progress) progress(p);
      if (stop && stop()) throw Error("interrupted: --out " + out.string() + " was not written");
    }
    p.files_done = n_files;
    if (progress) progress(p);

    // 5. The splits.
    if (m.characters == 0) throw Error(options.data.string() + ": no text (only byte-order marks)");
    if (m.tokens == 0)
      throw Error(options.data.string() + ": no tokens: --unknown skip left out every character");
    if (!by_docs) {
      m.shards = stream.finish();
      const uint64_t n_val = static_cast<uint64_t>(std::floor(static_cast<double>(m.tokens) * f));
      const uint64_t n_train = m.tokens - n_val;
      if (f > 0 && n_val == 0)
        throw Error(options.data.string() + ": the validation split would be empty (--val-fraction " + format_number(f) +
                    " of " + std::to_string(m.tokens) + " tokens); use a larger --val-fraction, or 0");
      uint64_t at = 0;
      for (size_t s = 0; s < m.shards.size(); ++s) {
        const uint64_t begin = at, end = at + m.shards[s].tokens;
        if (begin < n_train) m.train.pieces.push_back({s, 0, std::min(end, n_train) - begin});
        if (end > n_train) {
          const uint64_t from = std::max(begin, n_train);
          m.val.pieces.push_back({s, from - begin, end - from});
        }
        at = end;
      }
      m.train.tokens = n_train;
      m.val.tokens = n_val;
      at = 0;
      for (SourceFile& sf : m.files) {
        const uint64_t begin = at, end = at + sf.tokens;
        const bool in_train = begin < n_train && sf.tokens > 0, in_val = end > n_train && sf.tokens > 0;
        sf.split = in_train && in_val ? "train+val" : in_val ? "val" : "train";
        m.train.documents += in_train;
        m.val.documents += in_val;
        at = end;
      }
    } else {
      const std::vector<ShardInfo> train = stream.finish(), val = val_stream->finish();
      m.shards = train;
      m.shards.insert(m.shards.end(), val.begin(), val.end());
      for (size_t s = 0; s < m.shards.size(); ++s) {
        SplitInfo& split = s < train.size() ? m.train : m.val;
        split.pieces.push_back({s, 0, m.shards[s].tokens});
        split.tokens += m.shards[s].tokens;
      }
      for (size_t i = 0; i < n_files; ++i)
        if (m.files[i].tokens > 0) ++(file_val[i] ? m.val : m.train).documents;
      if (m.train.tokens == 0) throw Error(options.data.string() + ": the training documents hold no tokens");
      if (f > 0 && m.val.tokens == 0)
        throw Error(options.data.string() + ": the validation documents hold no tokens; use --split tail");
    }

    // 6. The tokenizer beside the shards (the data directory describes itself), data.json last,
    // then the directory takes --out's name.
    save_tokenizer_dir(tokenizer, tmp / kTokenizerDir);
    write_file_atomic(tmp / kDataFile, to_json(m).dump(1) + "\n");
    sync_dir(tmp);
    commit(tmp, out, replace);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return result;
}

}  // namespace potop
