#include "checkpoint/gguf_file.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "kernels/quant.h"

namespace potop {

static_assert(std::endian::native == std::endian::little, "GGUF is read little-endian");

namespace {

// GGUF's value types (enum gguf_type).
enum : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

constexpr int kMaxDims = 4;  // GGML_MAX_DIMS

// Reads the header from the mapping, every read checked against its end.
class Cursor {
 public:
  Cursor(const char* data, size_t size, const std::string& path) : data_(data), size_(size), path_(path) {}

  template <class T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string string(const char* what) {
    const auto n = get<uint64_t>(what);
    need(n, what);
    std::string s(data_ + at_, static_cast<size_t>(n));
    at_ += static_cast<size_t>(n);
    return s;
  }
  void need(uint64_t bytes, const char* what) const {
    if (bytes > size_ - at_) throw Error(path_ + ": ends inside " + what + " (the file is cut short or not GGUF)");
  }
  size_t at() const { return at_; }
  size_t left() const { return size_ - at_; }

 private:
  const char* data_;
  size_t size_, at_ = 0;
  const std::string& path_;
};

nlohmann::json scalar(Cursor& c, uint32_t type, const std::string& key, const std::string& path) {
  switch (type) {
    case kU8: return c.get<uint8_t>("a value");
    case kI8: return c.get<int8_t>("a value");
    case kU16: return c.get<uint16_t>("a value");
    case kI16: return c.get<int16_t>("a value");
    case kU32: return c.get<uint32_t>("a value");
    case kI32: return c.get<int32_t>("a value");
    case kF32: return c.get<float>("a value");
    case kBool: return c.get<uint8_t>("a value") != 0;
    case kString: return c.string("a string value");
    case kU64: return c.get<uint64_t>("a value");
    case kI64: return c.get<int64_t>("a value");
    case kF64: return c.get<double>("a value");
    default: throw Error(path + ": metadata " + key + " has value type " + std::to_string(type) + ", which GGUF does not define");
  }
}

// The smallest size a value of `type` takes, so that a count can be checked against the bytes left.
uint64_t min_bytes(uint32_t type) {
  switch (type) {
    case kU8: case kI8: case kBool: return 1;
    case kU16: case kI16: return 2;
    case kU32: case kI32: case kF32: return 4;
    default: return 8;  // a string's length, a 64-bit value
  }
}

}  // namespace

std::string to_string(GgmlType type) {
  switch (static_cast<uint32_t>(type)) {
    case 0: return "f32";
    case 1: return "f16";
    case 2: return "q4_0";
    case 3: return "q4_1";
    case 6: return "q5_0";
    case 7: return "q5_1";
    case 8: return "q8_0";
    case 9: return "q8_1";
    case 10: return "q2_K";
    case 11: return "q3_K";
    case 12: return "q4_K";
    case 13: return "q5_K";
    case 14: return "q6_K";
    case 15: return "q8_K";
    case 16: return "iq2_xxs";
    case 17: return "iq2_xs";
    case 18: return "iq3_xxs";
    case 19: return "iq1_s";
    case 20: return "iq4_nl";
    case 21: return "iq3_s";
    case 22: return "iq2_s";
    case 23: return "iq4_xs";
    case 24: return "i8";
    case 25: return "i16";
    case 26: return "i32";
    case 27: return "i64";
    case 28: return "f64";
    case 29: return "iq1_m";
    case 30: return "bf16";
    case 34: return "tq1_0";
    case 35: return "tq2_0";
  }
  return "type " + std::to_string(static_cast<uint32_t>(type));
}

bool ggml_type_known(GgmlType type) {
  switch (type) {
    case GgmlType::kF32: case GgmlType::kF16: case GgmlType::kQ4_0: case GgmlType::kQ8_0: case GgmlType::kBF16:
      return true;
  }
  return false;
}

size_t ggml_row_bytes(GgmlType type, int64_t n) {
  switch (type) {
    case GgmlType::kF32: return static_cast<size_t>(n) * 4;
    case GgmlType::kF16: case GgmlType::kBF16: return static_cast<size_t>(n) * 2;
    case GgmlType::kQ4_0: POTOP_CHECK(n % 32 == 0, "q4_0 rows are whole blocks"); return static_cast<size_t>(n / 32) * 18;
    case GgmlType::kQ8_0: POTOP_CHECK(n % 32 == 0, "q8_0 rows are whole blocks"); return static_cast<size_t>(n / 32) * 34;
  }
  POTOP_CHECK(false, "ggml_row_bytes: " + to_string(type));
  return 0;
}

int64_t GgufTensorInfo::rows() const {
  int64_t n = 1;
  for (size_t d = 1; d < ne.size(); ++d) n *= ne[d];
  return n;
}

GgufFile::GgufFile(const std::filesystem::path& path) : path_(path.string()) {
  file_ = std::make_unique<MappedFile>(path);
  Cursor c(file_->data(), file_->size(), path_);
  c.need(4, "the magic");
  if (std::memcmp(file_->data(), "GGUF", 4) != 0) throw Error(path_ + ": not a GGUF file (it does not start with \"GGUF\")");
  c.get<uint32_t>("the magic");
  version_ = c.get<uint32_t>("the header");
  if (version_ != 2 && version_ != 3)
    throw Error(path_ + ": GGUF version " + std::to_string(version_) + "; potop reads versions 2 and 3");
  const auto n_tensors = c.get<uint64_t>("the header"), n_kv = c.get<uint64_t>("the header");
  // Each key takes at least 13 bytes and each tensor 24: a count the file cannot hold is refused
  // before anything is allocated for it.
  if (n_kv > c.left() / 13 || n_tensors > c.left() / 24)
    throw Error(path_ + ": the header counts " + std::to_string(n_kv) + " keys and " + std::to_string(n_tensors) +
                " tensors, more than the file holds (it is cut short, or not GGUF)");
  for (uint64_t i = 0; i < n_kv; ++i) {
    const std::string key = c.string("a metadata key");
    if (metadata_.contains(key)) throw Error(path_ + ": metadata key " + key + " appears twice");
    const auto type = c.get<uint32_t>("a metadata value's type");
    if (type != kArray) {
      metadata_[key] = scalar(c, type, key, path_);
      continue;
    }
    const auto item = c.get<uint32_t>("an array's type");
    const auto n = c.get<uint64_t>("an array's length");
    if (item == kArray) throw Error(path_ + ": metadata " + key + " is an array of arrays, which GGUF does not allow");
    if (n > c.left() / min_bytes(item)) throw Error(path_ + ": metadata " + key + " counts more items than the file holds");
    nlohmann::json a = nlohmann::json::array();
    a.get_ref<nlohmann::json::array_t&>().reserve(static_cast<size_t>(n));
    for (uint64_t k = 0; k < n; ++k) a.push_back(scalar(c, item, key, path_));
    metadata_[key] = std::move(a);
  }
  uint64_t alignment = kGgufAlignment;
  if (metadata_.contains("general.alignment")) {
    const nlohmann::json& a = metadata_["general.alignment"];
    if (!a.is_number_unsigned() || a.get<uint64_t>() == 0 || (a.get<uint64_t>() & (a.get<uint64_t>() - 1)) != 0)
      throw Error(path_ + ": general.alignment " + a.dump() + " is not a power of two");
    alignment = a.get<uint64_t>();
  }
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    t.name = c.string("a tensor's name");
    const auto n_dims = c.get<uint32_t>("a tensor's dimensions");
    if (n_dims < 1 || n_dims > kMaxDims)
      throw Error(path_ + ": tensor " + t.name + " has " + std::to_string(n_dims) + " dimensions (ggml has 1 to 4)");
    int64_t numel = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const auto n = c.get<uint64_t>("a tensor's dimensions");
      if (n == 0 || n > uint64_t{1} << 40 || numel > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(n))
        throw Error(path_ + ": tensor " + t.name + " has a dimension of " + std::to_string(n));
      t.ne.push_back(static_cast<int64_t>(n));
      numel *= static_cast<int64_t>(n);
    }
    t.type = static_cast<GgmlType>(c.get<uint32_t>("a tensor's type"));
    t.offset = c.get<uint64_t>("a tensor's offset");
    if (t.offset % alignment != 0)
      throw Error(path_ + ": tensor " + t.name + " starts at " + std::to_string(t.offset) + ", not aligned to " +
                  std::to_string(alignment));
    if (ggml_type_known(t.type)) {
      const bool blocks = t.type == GgmlType::kQ8_0 || t.type == GgmlType::kQ4_0;
      if (blocks && t.ne[0] % kQuantBlock != 0)
        throw Error(path_ + ": tensor " + t.name + " is " + to_string(t.type) + " with rows of " +
                    std::to_string(t.ne[0]) + " values, not whole blocks of 32");
      t.bytes = ggml_row_bytes(t.type, t.ne[0]) * static_cast<size_t>(t.rows());
    }
    if (!index_.emplace(t.name, tensors_.size()).second) throw Error(path_ + ": tensor " + t.name + " appears twice");
    tensors_.push_back(std::move(t));
  }
  data_start_ = (c.at() + alignment - 1) / alignment * alignment;
  const size_t data_bytes = file_->size() >= data_start_ ? file_->size() - data_start_ : 0;
  for (const GgufTensorInfo& t : tensors_)
    if (t.offset > data_bytes || t.bytes > data_bytes - t.offset)
      throw Error(path_ + ": tensor " + t.name + "'s data runs past the end of the file (cut short?)");
  // Two tensors sharing bytes are not two tensors: llama.cpp refuses every layout but one after
  // the other, potop refuses an overlap (as it does in safetensors).
  std::vector<const GgufTensorInfo*> by_offset;
  for (const GgufTensorInfo& t : tensors_)
    if (t.bytes > 0) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->offset < by_offset[i - 1]->offset + by_offset[i - 1]->bytes)
      throw Error(path_ + ": tensors " + by_offset[i - 1]->name + " and " + by_offset[i]->name +
                  " overlap in the data section");
}

std::string GgufFile::string(const std::string& key) const {
  const auto it = metadata_.find(key);
  if (it == metadata_.end()) throw Error(path_ + ": metadata " + key + " is missing");
  if (!it->is_string()) throw Error(path_ + ": metadata " + key + " is not a string");
  return it->get<std::string>();
}

const GgufTensorInfo* GgufFile::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const uint8_t* GgufFile::data(const GgufTensorInfo& info) const {
  return reinterpret_cast<const uint8_t*>(file_->data() + data_start_ + info.offset);
}

void GgufFile::release(const GgufTensorInfo& info) const { file_->release(data_start_ + info.offset, info.bytes); }

void GgufFile::read_floats(const GgufTensorInfo& info, float* dst) const {
  const uint8_t* src = data(info);
  const int64_t K = info.row_length(), rows = info.rows();
  const size_t n = static_cast<size_t>(K * rows);
  switch (info.type) {
    case GgmlType::kF32:
      std::memcpy(dst, src, n * sizeof(float));
      return;
    case GgmlType::kBF16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        const uint32_t bits = uint32_t{h} << 16;
        std::memcpy(dst + i, &bits, 4);
      }
      return;
    case GgmlType::kF16:
    case GgmlType::kQ8_0:
    case GgmlType::kQ4_0: {
      const QuantType q = info.type == GgmlType::kF16 ? QuantType::kF16
                          : info.type == GgmlType::kQ8_0 ? QuantType::kQ8_0 : QuantType::kQ4_0;
      const size_t row_bytes = ggml_row_bytes(info.type, K);
      for (int64_t r = 0; r < rows; ++r) dequantize_row(q, src + r * row_bytes, static_cast<int>(K), dst + r * K);
      return;
    }
  }
  throw Error(path_ + ": tensor " + info.name + " is " + to_string(info.type) +
              "; potop reads f32, f16, bf16, q8_0 and q4_0 tensors");
}

}  // namespace potop
