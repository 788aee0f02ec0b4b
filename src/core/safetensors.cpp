#include "core/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_set>

#include "core/error.h"
#include "core/file_io.h"

namespace potop {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

namespace {

using Json = nlohmann::ordered_json;

constexpr uint64_t kMaxHeaderBytes = 100ull * 1000 * 1000;

struct DtypeRow {
  Dtype dtype;
  const char* name;
  size_t size;
};
constexpr DtypeRow kDtypes[] = {
    {Dtype::BOOL, "BOOL", 1}, {Dtype::U8, "U8", 1},     {Dtype::I8, "I8", 1},     {Dtype::I16, "I16", 2},
    {Dtype::U16, "U16", 2},   {Dtype::F16, "F16", 2},   {Dtype::BF16, "BF16", 2}, {Dtype::I32, "I32", 4},
    {Dtype::U32, "U32", 4},   {Dtype::F32, "F32", 4},   {Dtype::I64, "I64", 8},   {Dtype::U64, "U64", 8},
    {Dtype::F64, "F64", 8},
};

const DtypeRow& dtype_row(Dtype dtype) {
  for (const auto& row : kDtypes)
    if (row.dtype == dtype) return row;
  POTOP_CHECK(false, "unknown Dtype value");
  __builtin_unreachable();
}

// --- XXH64 (Yann Collet's algorithm, seed 0) ---
constexpr uint64_t P1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t P2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t P3 = 0x165667B19E3779F9ull;
constexpr uint64_t P4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t P5 = 0x27D4EB2F165667C5ull;

inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t load32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t xxh_round(uint64_t acc, uint64_t input) { return rotl64(acc + input * P2, 31) * P1; }
inline uint64_t xxh_merge(uint64_t acc, uint64_t v) { return (acc ^ xxh_round(0, v)) * P1 + P4; }

uint64_t read_le64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

std::string in_quotes(const std::string& name) { return "'" + name + "'"; }

}  // namespace

size_t dtype_size(Dtype dtype) { return dtype_row(dtype).size; }
const char* dtype_name(Dtype dtype) { return dtype_row(dtype).name; }

std::optional<Dtype> parse_dtype(std::string_view name) {
  for (const auto& row : kDtypes)
    if (name == row.name) return row.dtype;
  return std::nullopt;
}

Xxh64::Xxh64() : acc_{P1 + P2, P2, 0, 0 - P1} {}

void Xxh64::update(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  total_ += size;
  if (tail_size_ + size < 32) {
    if (size) std::memcpy(tail_ + tail_size_, p, size);
    tail_size_ += size;
    return;
  }
  if (tail_size_) {
    const size_t fill = 32 - tail_size_;
    std::memcpy(tail_ + tail_size_, p, fill);
    for (int i = 0; i < 4; ++i) acc_[i] = xxh_round(acc_[i], load64(tail_ + 8 * i));
    p += fill;
    size -= fill;
    tail_size_ = 0;
  }
  uint64_t a0 = acc_[0], a1 = acc_[1], a2 = acc_[2], a3 = acc_[3];
  while (size >= 32) {
    a0 = xxh_round(a0, load64(p));
    a1 = xxh_round(a1, load64(p + 8));
    a2 = xxh_round(a2, load64(p + 16));
    a3 = xxh_round(a3, load64(p + 24));
    p += 32;
    size -= 32;
  }
  acc_[0] = a0, acc_[1] = a1, acc_[2] = a2, acc_[3] = a3;
  if (size) std::memcpy(tail_, p, size);
  tail_size_ = size;
}

uint64_t Xxh64::digest() const {
  uint64_t h;
  if (total_ >= 32) {
    h = rotl64(acc_[0], 1) + rotl64(acc_[1], 7) + rotl64(acc_[2], 12) + rotl64(acc_[3], 18);
    for (uint64_t a : acc_) h = xxh_merge(h, a);
  } else {
    h = P5;  // seed + P5
  }
  h += total_;
  const unsigned char* p = tail_;
  size_t n = tail_size_;
  for (; n >= 8; p += 8, n -= 8) h = rotl64(h ^ xxh_round(0, load64(p)), 27) * P1 + P4;
  if (n >= 4) {
    h = rotl64(h ^ (static_cast<uint64_t>(load32(p)) * P1), 23) * P2 + P3;
    p += 4;
    n -= 4;
  }
  for (; n > 0; ++p, --n) h = rotl64(h ^ (*p * P5), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

uint64_t xxh64(const void* data, size_t size) {
  Xxh64 x;
  x.update(data, size);
  return x.digest();
}

std::string checksum_string(uint64_t hash) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "xxh64:%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

// ------------------------------------------------------------------------------------------
// Writing

void write_safetensors(const std::filesystem::path& path, const std::vector<SafetensorsEntry>& entries,
                       const Metadata& metadata) {
  std::unordered_set<std::string> seen;
  std::vector<size_t> sizes;
  sizes.reserve(entries.size());
  Xxh64 hash;
  for (const auto& e : entries) {
    POTOP_CHECK(e.name != "__metadata__", "a tensor cannot be named __metadata__");
    POTOP_CHECK(seen.insert(e.name).second, "duplicate tensor name " + e.name);
    for (int64_t d : e.shape) POTOP_CHECK(d >= 0, e.name + " has a negative dimension");
    const size_t bytes = shape_numel(e.shape) * dtype_size(e.dtype);
    POTOP_CHECK(bytes == 0 || e.data != nullptr, e.name + " has no data");
    sizes.push_back(bytes);
    if (bytes) hash.update(e.data, bytes);
  }

  Json header = Json::object();
  Json meta = Json::object();
  for (const auto& [k, v] : metadata)
    if (k != kChecksumKey) meta[k] = v;
  meta[kChecksumKey] = checksum_string(hash.digest());
  header["__metadata__"] = std::move(meta);
  size_t offset = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    header[e.name] = {{"dtype", dtype_name(e.dtype)}, {"shape", e.shape}, {"data_offsets", {offset, offset + sizes[i]}}};
    offset += sizes[i];
  }

  std::string text;
  try {
    text = header.dump();
  } catch (const Json::exception& ex) {  // e.g. a metadata value that is not valid UTF-8
    throw Error(path.string() + ": cannot write the header: " + ex.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // 8 + N is then a multiple of 8
  unsigned char length[8];
  const uint64_t n = text.size();
  std::memcpy(length, &n, 8);

  write_file_atomic(path, [&](FileSink& sink) {
    sink.write(length, 8);
    sink.write(text);
    for (size_t i = 0; i < entries.size(); ++i)
      if (sizes[i]) sink.write(entries[i].data, sizes[i]);
  });
}

// ------------------------------------------------------------------------------------------
// Reading

Metadata read_safetensors_metadata(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(name + ": cannot open");
  char length[8];
  if (!in.read(length, 8)) throw Error(name + ": too short to be a safetensors file");
  const uint64_t n = read_le64(length);
  if (n > kMaxHeaderBytes) throw Error(name + ": header length " + std::to_string(n) + " is absurd: not a safetensors file");
  std::string header(n, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(n))) throw Error(name + ": the header is truncated");
  const Json j = Json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw Error(name + ": header is not a JSON object");
  // The data section's length is known from the header: a file cut short is told here, as loading
  // it would be (the tensors themselves are not read).
  uint64_t data_end = 0;
  for (const auto& [key, value] : j.items()) {
    const auto offsets = value.is_object() ? value.find("data_offsets") : value.end();
    if (key != "__metadata__" && offsets != value.end() && offsets->is_array() && offsets->size() == 2 &&
        (*offsets)[1].is_number_unsigned())
      data_end = std::max(data_end, (*offsets)[1].get<uint64_t>());
  }
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size - 8 - n < data_end)
    throw Error(name + ": truncated: its tensors need " + std::to_string(data_end) + " bytes after the header, and " +
                std::to_string(size - 8 - n) + " are there");
  Metadata meta;
  const auto it = j.find("__metadata__");
  if (it != j.end() && it->is_object())
    for (const auto& [key, value] : it->items())
      if (value.is_string()) meta[key] = value.get<std::string>();
  return meta;
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : label_(path.string()) {
  owned_ = std::make_shared<const std::string>(read_file(path));
  data_ = owned_->data();
  size_ = owned_->size();
  parse();
}

SafetensorsFile SafetensorsFile::from_bytes(std::string bytes, const std::string& label) {
  SafetensorsFile f;
  f.label_ = label;
  f.owned_ = std::make_shared<const std::string>(std::move(bytes));
  f.data_ = f.owned_->data();
  f.size_ = f.owned_->size();
  f.parse();
  return f;
}

SafetensorsFile SafetensorsFile::map(const std::filesystem::path& path) {
  SafetensorsFile f;
  f.label_ = path.string();
  f.mapped_ = std::make_shared<const MappedFile>(path);
  f.data_ = f.mapped_->data();
  f.size_ = f.mapped_->size();
  f.parse();
  return f;
}

void SafetensorsFile::release(const std::string& name) const {
  const auto& i = info(name);
  if (mapped_) mapped_->release(data_start_ + i.begin, i.bytes());
}

void SafetensorsFile::fail(const std::string& what) const { throw Error(label_ + ": " + what); }

void SafetensorsFile::parse() {
  const size_t size = size_;
  if (size < 8) {
    fail("too short to be a safetensors file (" + std::to_string(size) + " bytes; the 8-byte header length is missing)");
  }
  const uint64_t n = read_le64(data_);
  if (n > kMaxHeaderBytes) {
    fail("header length " + std::to_string(n) + " is absurd (over 100 MB): not a safetensors file, or corrupted");
  }
  if (n > size - 8) {
    fail("header length " + std::to_string(n) + " runs past the end of the file (" + std::to_string(size) +
         " bytes): the file is truncated or corrupted");
  }
  data_start_ = 8 + n;
  const size_t data_size = size - data_start_;

  // Parse, noting top-level keys that appear twice (JSON allows it; a tensor table must not).
  std::set<std::string> seen;
  std::string duplicate;
  Json::parser_callback_t note_keys = [&](int depth, nlohmann::json::parse_event_t event, Json& parsed) {
    if (depth == 1 && event == nlohmann::json::parse_event_t::key && duplicate.empty()) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (!seen.insert(key).second) duplicate = key;
    }
    return true;
  };
  Json header;
  try {
    const char* begin = data_ + 8;
    header = Json::parse(begin, begin + n, note_keys);
  } catch (const Json::exception& ex) {  // parse_error, or out_of_range for a number like 1e999999
    std::string why = ex.what();
    if (auto pos = why.find("] "); pos != std::string::npos) why = why.substr(pos + 2);
    fail("header is not valid JSON (" + why + ")");
  }
  if (!header.is_object()) fail("header is not a JSON object");
  if (!duplicate.empty()) fail("header lists " + in_quotes(duplicate) + " twice");

  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      if (value.is_null()) continue;
      if (!value.is_object()) fail("__metadata__ is not an object of strings");
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string()) fail("__metadata__ value for " + in_quotes(mk) + " is not a string");
        metadata_[mk] = mv.get<std::string>();
      }
      continue;
    }
    const std::string tensor = "tensor " + in_quotes(key);
    if (!value.is_object()) fail(tensor + ": entry is not an object");
    SafetensorsInfo info;
    info.name = key;

    auto dtype_it = value.find("dtype");
    if (dtype_it == value.end()) fail(tensor + ": missing dtype");
    if (!dtype_it->is_string()) fail(tensor + ": dtype is not a string");
    const auto dtype = parse_dtype(dtype_it->get_ref<const std::string&>());
    if (!dtype) fail(tensor + ": unknown dtype " + in_quotes(dtype_it->get<std::string>()));
    info.dtype = *dtype;

    auto shape_it = value.find("shape");
    if (shape_it == value.end()) fail(tensor + ": missing shape");
    if (!shape_it->is_array()) fail(tensor + ": shape is not an array");
    size_t numel = 1;
    for (const auto& d : *shape_it) {
      if (!d.is_number_integer()) fail(tensor + ": shape has a dimension that is not an integer");
      if (!d.is_number_unsigned() && d.get<int64_t>() < 0) fail(tensor + ": shape has a negative dimension");
      const uint64_t dim = d.get<uint64_t>();
      if (dim > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(numel, dim, &numel)) {
        fail(tensor + ": shape is too large");
      }
      info.shape.push_back(static_cast<int64_t>(dim));
    }
    size_t nbytes = 0;
    if (__builtin_mul_overflow(numel, dtype_size(info.dtype), &nbytes)) fail(tensor + ": shape is too large");

    auto offsets_it = value.find("data_offsets");
    if (offsets_it == value.end()) fail(tensor + ": missing data_offsets");
    const Json& offsets = *offsets_it;
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned()) {
      fail(tensor + ": data_offsets is not a pair of non-negative integers");
    }
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end) {
      fail(tensor + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] end before they begin");
    }
    if (end > data_size) {
      fail(tensor + ": data_offsets end " + std::to_string(end) + " lies beyond the data section (" +
           std::to_string(data_size) + " bytes): the file is truncated or corrupted");
    }
    if (end - begin != nbytes) {
      fail(tensor + ": " + dtype_name(info.dtype) + " " + shape_string(info.shape) + " needs " +
           std::to_string(nbytes) + " bytes but data_offsets cover " + std::to_string(end - begin));
    }
    info.begin = begin;
    info.end = end;
    infos_.push_back(std::move(info));
  }

  // Every byte of the data section must belong to exactly one tensor.
  std::stable_sort(infos_.begin(), infos_.end(), [](const SafetensorsInfo& a, const SafetensorsInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  size_t cursor = 0;
  const SafetensorsInfo* previous = nullptr;
  for (const auto& info : infos_) {
    if (info.begin < cursor) {
      fail("tensors " + in_quotes(previous->name) + " and " + in_quotes(info.name) + " overlap in the data section");
    }
    if (info.begin > cursor) {
      fail("bytes " + std::to_string(cursor) + " to " + std::to_string(info.begin) +
           " of the data section belong to no tensor: the file is corrupted");
    }
    cursor = info.end;
    if (info.end > info.begin || !previous) previous = &info;
  }
  if (cursor != data_size) {
    fail("the data section has " + std::to_string(data_size - cursor) +
         " trailing bytes that belong to no tensor: the file is corrupted");
  }

  for (size_t i = 0; i < infos_.size(); ++i) {
    names_.push_back(infos_[i].name);
    index_[infos_[i].name] = i;
  }

  if (auto it = metadata_.find(kChecksumKey); it != metadata_.end()) {
    const std::string& stored = it->second;
    const bool well_formed = stored.size() == 22 && stored.compare(0, 6, "xxh64:") == 0 &&
                             stored.find_first_not_of("0123456789abcdefABCDEF", 6) == std::string::npos;
    if (!well_formed) fail("unsupported checksum " + in_quotes(stored) + " in metadata key " + kChecksumKey);
    const uint64_t expected = std::strtoull(stored.c_str() + 6, nullptr, 16);
    if (xxh64(data_ + data_start_, data_size) != expected) {
      fail("checksum mismatch — the file is corrupted or was modified");
    }
    if (mapped_) mapped_->release(data_start_, data_size);  // read once to check; the tensors come later
  }
}

const SafetensorsInfo& SafetensorsFile::info(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) fail("no tensor named " + in_quotes(name));
  return infos_[it->second];
}

std::optional<std::string> SafetensorsFile::metadata_value(const std::string& key) const {
  auto it = metadata_.find(key);
  if (it == metadata_.end()) return std::nullopt;
  return it->second;
}

std::span<const std::byte> SafetensorsFile::bytes(const std::string& name) const {
  const auto& i = info(name);
  return {reinterpret_cast<const std::byte*>(data_ + data_start_ + i.begin), i.bytes()};
}

const SafetensorsInfo& SafetensorsFile::require_f32(const std::string& name) const {
  const auto& i = info(name);
  if (i.dtype != Dtype::F32) fail("tensor " + in_quotes(name) + " is " + dtype_name(i.dtype) + ", expected F32");
  return i;
}

std::span<const float> SafetensorsFile::f32(const std::string& name) const {
  const auto& i = require_f32(name);
  const char* p = data_ + data_start_ + i.begin;
  if (reinterpret_cast<uintptr_t>(p) % alignof(float) != 0) {
    fail("tensor " + in_quotes(name) + " is not 4-byte aligned in the file; copy it out with copy_f32_into");
  }
  return {reinterpret_cast<const float*>(p), i.numel()};
}

void SafetensorsFile::copy_f32_into(const std::string& name, float* dst, const Shape& expected) const {
  const auto& i = require_f32(name);
  if (i.shape != expected) {
    fail("tensor " + in_quotes(name) + " has shape " + shape_string(i.shape) + " in the file, but " +
         shape_string(expected) + " is expected");
  }
  if (i.bytes()) std::memcpy(dst, data_ + data_start_ + i.begin, i.bytes());
}

}  // namespace potop
