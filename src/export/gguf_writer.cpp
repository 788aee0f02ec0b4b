#include "export/gguf_writer.h"

#include <bit>
#include <cstring>

#include "core/error.h"
#include "core/file_io.h"

namespace potop {

static_assert(std::endian::native == std::endian::little, "GGUF is written little-endian");

namespace {

// GGUF's value types (gguf_type).
enum : uint32_t {
  kInt32 = 5,
  kUint32 = 4,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
};

template <class T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void put_string(std::string& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out += s;
}

size_t padded(size_t n) { return (n + kGgufAlignment - 1) / kGgufAlignment * kGgufAlignment; }

}  // namespace

void GgufWriter::start_kv(const std::string& key, uint32_t type) {
  POTOP_CHECK(keys_.insert(key).second, "GGUF key added twice: " + key);
  put_string(kv_, key);
  put<uint32_t>(kv_, type);
  ++kv_count_;
}

void GgufWriter::add_u32(const std::string& key, uint32_t value) { start_kv(key, kUint32), put(kv_, value); }
void GgufWriter::add_i32(const std::string& key, int32_t value) { start_kv(key, kInt32), put(kv_, value); }
void GgufWriter::add_f32(const std::string& key, float value) { start_kv(key, kFloat32), put(kv_, value); }
void GgufWriter::add_bool(const std::string& key, bool value) { start_kv(key, kBool), put<uint8_t>(kv_, value ? 1 : 0); }
void GgufWriter::add_string(const std::string& key, const std::string& value) {
  start_kv(key, kString), put_string(kv_, value);
}

void GgufWriter::add_strings(const std::string& key, const std::vector<std::string>& values) {
  start_kv(key, kArray);
  put<uint32_t>(kv_, kString), put<uint64_t>(kv_, values.size());
  for (const std::string& v : values) put_string(kv_, v);
}

void GgufWriter::add_f32s(const std::string& key, const std::vector<float>& values) {
  start_kv(key, kArray);
  put<uint32_t>(kv_, kFloat32), put<uint64_t>(kv_, values.size());
  for (const float v : values) put(kv_, v);
}

void GgufWriter::add_i32s(const std::string& key, const std::vector<int32_t>& values) {
  start_kv(key, kArray);
  put<uint32_t>(kv_, kInt32), put<uint64_t>(kv_, values.size());
  for (const int32_t v : values) put(kv_, v);
}

void GgufWriter::add_tensor(const std::string& name, std::vector<uint64_t> ne, GgmlType type,
                            std::vector<uint8_t> bytes) {
  POTOP_CHECK(!ne.empty() && ne.size() <= 4, "a ggml tensor has 1 to 4 dimensions");
  uint64_t rows = 1;
  for (size_t i = 1; i < ne.size(); ++i) rows *= ne[i];
  POTOP_CHECK(bytes.size() == rows * ggml_row_bytes(type, static_cast<int64_t>(ne[0])),
              "tensor " + name + ": its bytes do not match its dimensions and type");
  for (const Tensor& t : tensors_) POTOP_CHECK(t.name != name, "GGUF tensor added twice: " + name);
  tensors_.push_back({name, std::move(ne), type, std::move(bytes)});
}

std::string GgufWriter::header() const {
  std::string out;
  out += "GGUF";
  put<uint32_t>(out, kGgufVersion);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, kv_count_);
  out += kv_;
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_string(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.ne.size()));
    for (const uint64_t n : t.ne) put(out, n);
    put<uint32_t>(out, static_cast<uint32_t>(t.type));
    put(out, offset);
    offset += padded(t.bytes.size());
  }
  out.resize(padded(out.size()), '\0');
  return out;
}

size_t GgufWriter::file_bytes() const {
  size_t bytes = header().size();
  for (const Tensor& t : tensors_) bytes += padded(t.bytes.size());
  return bytes;
}

void GgufWriter::write(const std::filesystem::path& path) const {
  const std::string head = header();
  write_file_atomic(path, [&](FileSink& sink) {
    sink.write(head);
    static constexpr char kZeros[kGgufAlignment] = {};
    for (const Tensor& t : tensors_) {
      sink.write(t.bytes.data(), t.bytes.size());
      sink.write(kZeros, padded(t.bytes.size()) - t.bytes.size());
    }
  });
}

GgmlType parse_gguf_weight_type(const std::string& name, const std::string& flag) {
  if (name == "f32") return GgmlType::kF32;
  if (name == "f16") return GgmlType::kF16;
  if (name == "q8_0") return GgmlType::kQ8_0;
  if (name == "q4_0") return GgmlType::kQ4_0;
  throw Error(flag + " " + name + ": not a GGUF weight type potop writes (f32, f16, q8_0 or q4_0)");
}

}  // namespace potop
