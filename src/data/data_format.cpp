#include "data/data_format.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/hash.h"
#include "core/safetensors.h"

namespace potop {

using json = nlohmann::json;

int id_bytes(IdType t) { return t == IdType::kU16 ? 2 : 4; }
std::string to_string(IdType t) { return t == IdType::kU16 ? "u16" : "u32"; }
IdType id_type_for(int vocab_size) { return vocab_size <= 65536 ? IdType::kU16 : IdType::kU32; }

Choice split_by_choice(SplitBy& value) {
  return choice(value, {{SplitBy::kTail, "tail"}, {SplitBy::kDocuments, "documents"}});
}
std::string to_string(SplitBy s) { return s == SplitBy::kTail ? "tail" : "documents"; }

bool document_in_val(uint64_t index, double val_fraction) {
  const double i = static_cast<double>(index);
  return std::floor((i + 1) * val_fraction) > std::floor(i * val_fraction);
}

bool parse_checksum(std::string_view s, uint64_t& hash) {
  if (s.size() != 22 || !s.starts_with("xxh64:")) return false;
  uint64_t h = 0;
  for (char c : s.substr(6)) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return false;
    h = h << 4 | static_cast<uint64_t>(d);
  }
  hash = h;
  return true;
}

namespace {

json split_json(const SplitInfo& s, const std::vector<ShardInfo>& shards) {
  json pieces = json::array();
  for (const SplitPiece& p : s.pieces)
    pieces.push_back({{"shard", shards[p.shard].file}, {"begin", p.begin}, {"tokens", p.tokens}});
  return {{"tokens", s.tokens}, {"documents", s.documents}, {"pieces", pieces}};
}

// Typed access to data.json with messages that name the file and the key.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(source_ + ": \"" + key + "\" " + what);
  }
  const json& member(const json& obj, const std::string& key, const std::string& path) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(path, "is missing");
    return *it;
  }
  const json& object(const json& obj, const std::string& key, const std::string& path) const {
    const json& v = member(obj, key, path);
    if (!v.is_object()) fail(path, "is not an object");
    return v;
  }
  const json& array(const json& obj, const std::string& key, const std::string& path) const {
    const json& v = member(obj, key, path);
    if (!v.is_array()) fail(path, "is not an array");
    return v;
  }
  std::string string(const json& obj, const std::string& key, const std::string& path) const {
    const json& v = member(obj, key, path);
    if (!v.is_string()) fail(path, "is not a string");
    return v.get<std::string>();
  }
  uint64_t count(const json& obj, const std::string& key, const std::string& path) const {
    const json& v = member(obj, key, path);
    // A value built in memory from an int is signed; one parsed from text is unsigned.
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<long long>() < 0))
      fail(path, "is not a non-negative integer");
    return v.get<uint64_t>();
  }
  double number(const json& obj, const std::string& key, const std::string& path) const {
    const json& v = member(obj, key, path);
    if (!v.is_number()) fail(path, "is not a number");
    return v.get<double>();
  }

 private:
  std::string source_;
};

SplitInfo read_split(const Reader& r, const json& j, const std::string& name, const std::vector<ShardInfo>& shards,
                     const std::map<std::string, size_t>& index) {
  SplitInfo s;
  const json& o = r.object(j, name, name);
  s.tokens = r.count(o, "tokens", name + ".tokens");
  s.documents = r.count(o, "documents", name + ".documents");
  const json& pieces = r.array(o, "pieces", name + ".pieces");
  uint64_t sum = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const std::string at = name + ".pieces[" + std::to_string(i) + "]";
    if (!pieces[i].is_object()) r.fail(at, "is not an object");
    SplitPiece p;
    const std::string file = r.string(pieces[i], "shard", at + ".shard");
    const auto it = index.find(file);
    if (it == index.end()) r.fail(at + ".shard", "names '" + file + "', which is not in \"shards\"");
    p.shard = it->second;
    p.begin = r.count(pieces[i], "begin", at + ".begin");
    p.tokens = r.count(pieces[i], "tokens", at + ".tokens");
    if (p.tokens == 0 || p.begin > shards[p.shard].tokens || p.tokens > shards[p.shard].tokens - p.begin)
      r.fail(at, "is not a non-empty range inside its shard of " + std::to_string(shards[p.shard].tokens) + " tokens");
    sum += p.tokens;
    s.pieces.push_back(p);
  }
  if (sum != s.tokens)
    r.fail(name + ".tokens", "is " + std::to_string(s.tokens) + " but its pieces hold " + std::to_string(sum));
  return s;
}

}  // namespace

json to_json(const DataManifest& m) {
  json shards = json::array();
  for (const ShardInfo& s : m.shards)
    shards.push_back({{"file", s.file}, {"tokens", s.tokens}, {"checksum", checksum_string(s.checksum)}});
  json files = json::array();
  for (const SourceFile& f : m.files)
    files.push_back({{"path", f.path}, {"bytes", f.bytes}, {"characters", f.characters}, {"tokens", f.tokens},
                     {"split", f.split}});
  return {{"format", kDataFormat},
          {"version", m.version},
          {"tokenizer", {{"kind", m.tokenizer_kind}, {"size", m.vocab_size}, {"hash", hash_hex(m.tokenizer_hash)}}},
          {"ids", to_string(m.ids)},
          {"split", {{"by", to_string(m.split_by)}, {"val_fraction", m.val_fraction}}},
          {"counts", {{"documents", m.documents}, {"bytes", m.bytes}, {"characters", m.characters}, {"tokens", m.tokens}}},
          {"shard_tokens", m.shard_tokens},
          {"shards", shards},
          {"train", split_json(m.train, m.shards)},
          {"val", split_json(m.val, m.shards)},
          {"source", m.source},
          {"files", files}};
}

DataManifest manifest_from_json(const json& j, const std::string& source) {
  const Reader r(source);
  if (!j.is_object()) throw Error(source + ": not a JSON object");
  DataManifest m;
  const auto format = j.find("format");
  if (format == j.end() || !format->is_string() || format->get<std::string>() != kDataFormat)
    throw Error(source + ": not a potop data description (\"format\" is not \"" + kDataFormat +
                "\"); prepare the data with potop prepare");
  const json& version = r.member(j, "version", "version");
  if (!version.is_number_integer()) r.fail("version", "is not an integer");
  if (version.get<long long>() != kDataFormatVersion)
    throw Error(source + ": format version " + version.dump() + ", but this potop reads version " +
                std::to_string(kDataFormatVersion) + "; prepare the data again with this potop");

  const json& tok = r.object(j, "tokenizer", "tokenizer");
  m.tokenizer_kind = r.string(tok, "kind", "tokenizer.kind");
  const uint64_t size = r.count(tok, "size", "tokenizer.size");
  if (size < 1 || size > 0x7fffffff) r.fail("tokenizer.size", "is out of range");
  m.vocab_size = static_cast<int>(size);
  const std::string hash = r.string(tok, "hash", "tokenizer.hash");
  if (!parse_checksum("xxh64:" + hash, m.tokenizer_hash)) r.fail("tokenizer.hash", "is not 16 hex digits");

  const std::string ids = r.string(j, "ids", "ids");
  if (ids == "u16") m.ids = IdType::kU16;
  else if (ids == "u32") m.ids = IdType::kU32;
  else r.fail("ids", "is '" + ids + "', expected 'u16' or 'u32'");
  if (m.ids == IdType::kU16 && m.vocab_size > 65536) r.fail("ids", "is u16 but the vocabulary has " + std::to_string(size) + " tokens");

  const json& split = r.object(j, "split", "split");
  const std::string by = r.string(split, "by", "split.by");
  if (by == "tail") m.split_by = SplitBy::kTail;
  else if (by == "documents") m.split_by = SplitBy::kDocuments;
  else r.fail("split.by", "is '" + by + "', expected 'tail' or 'documents'");
  m.val_fraction = r.number(split, "val_fraction", "split.val_fraction");

  const json& counts = r.object(j, "counts", "counts");
  m.documents = r.count(counts, "documents", "counts.documents");
  m.bytes = r.count(counts, "bytes", "counts.bytes");
  m.characters = r.count(counts, "characters", "counts.characters");
  m.tokens = r.count(counts, "tokens", "counts.tokens");
  m.shard_tokens = r.count(j, "shard_tokens", "shard_tokens");

  const json& shards = r.array(j, "shards", "shards");
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < shards.size(); ++i) {
    const std::string at = "shards[" + std::to_string(i) + "]";
    if (!shards[i].is_object()) r.fail(at, "is not an object");
    ShardInfo s;
    s.file = r.string(shards[i], "file", at + ".file");
    if (s.file.empty() || s.file.find('/') != std::string::npos || s.file == "." || s.file == ".." ||
        s.file == kDataFile || s.file == kTokenizerDir)
      r.fail(at + ".file", "is '" + s.file + "', not a shard file name");
    s.tokens = r.count(shards[i], "tokens", at + ".tokens");
    if (s.tokens > (uint64_t{1} << 48)) r.fail(at + ".tokens", "is out of range");
    if (!parse_checksum(r.string(shards[i], "checksum", at + ".checksum"), s.checksum))
      r.fail(at + ".checksum", "is not \"xxh64:\" and 16 hex digits");
    if (!index.emplace(s.file, i).second) r.fail(at + ".file", "names '" + s.file + "' twice");
    m.shards.push_back(s);
  }
  m.train = read_split(r, j, "train", m.shards, index);
  m.val = read_split(r, j, "val", m.shards, index);
  if (m.train.tokens + m.val.tokens != m.tokens)
    r.fail("counts.tokens", "is " + std::to_string(m.tokens) + " but the splits hold " +
                                std::to_string(m.train.tokens + m.val.tokens));
  m.source = r.string(j, "source", "source");
  const json& files = r.array(j, "files", "files");
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string at = "files[" + std::to_string(i) + "]";
    if (!files[i].is_object()) r.fail(at, "is not an object");
    SourceFile f;
    f.path = r.string(files[i], "path", at + ".path");
    f.bytes = r.count(files[i], "bytes", at + ".bytes");
    f.characters = r.count(files[i], "characters", at + ".characters");
    f.tokens = r.count(files[i], "tokens", at + ".tokens");
    f.split = r.string(files[i], "split", at + ".split");
    m.files.push_back(f);
  }
  return m;
}

}  // namespace potop
