// The safetensors container (Hugging Face's format), which potop uses for every checkpoint:
//
//   [8 bytes: header length N, little-endian u64]
//   [N bytes: UTF-8 JSON object, padded with spaces so the data starts 8-byte aligned]
//     {"<tensor>": {"dtype": "F32", "shape": [768, 3072], "data_offsets": [begin, end]}, ...,
//      "__metadata__": {"<key>": "<string value>", ...}}
//   [data section: tensors back to back; offsets are relative to its start]
//
// The writer lays tensors out in the order given and adds "potop.checksum" = "xxh64:<16 hex>"
// (XXH64, seed 0, of the whole data section) to the metadata. The reader validates strictly
// (every byte of the data section belongs to exactly one tensor, sizes match shapes) and
// verifies the checksum when present; files from other tools, which have none, still load.
// Every problem with a file is a potop::Error whose message starts with "<path>: ".
// docs/checkpoint-format.md describes the format for readers outside potop.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"

namespace potop {

class MappedFile;  // core/file_io.h

enum class Dtype { BOOL, U8, I8, I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64 };

size_t dtype_size(Dtype dtype);
const char* dtype_name(Dtype dtype);  // "F32"
std::optional<Dtype> parse_dtype(std::string_view name);

using Metadata = std::map<std::string, std::string>;

// The metadata key the writer fills with the data section's checksum.
inline constexpr const char* kChecksumKey = "potop.checksum";

// XXH64 (seed 0) of a byte range, continued over several ranges.
class Xxh64 {
 public:
  Xxh64();
  void update(const void* data, size_t size);
  uint64_t digest() const;

 private:
  uint64_t acc_[4];
  unsigned char tail_[32] = {};
  size_t tail_size_ = 0;
  uint64_t total_ = 0;
};
uint64_t xxh64(const void* data, size_t size);
std::string checksum_string(uint64_t hash);  // "xxh64:0123456789abcdef"

struct SafetensorsEntry {
  std::string name;
  Dtype dtype = Dtype::F32;
  Shape shape;                  // {} for a scalar
  const void* data = nullptr;   // numel * dtype_size bytes, not owned; may be null when empty
};

// Writes the tensors (in the given order) and the metadata atomically (file_io.h). Any
// "potop.checksum" in `metadata` is replaced by the checksum of the data written. Duplicate
// names, "__metadata__" as a name and negative dimensions are caller bugs (POTOP_CHECK).
void write_safetensors(const std::filesystem::path& path, const std::vector<SafetensorsEntry>& entries,
                       const Metadata& metadata = {});

struct SafetensorsInfo {
  std::string name;
  Dtype dtype = Dtype::F32;
  Shape shape;
  size_t begin = 0;  // byte offsets in the data section
  size_t end = 0;
  size_t numel() const { return shape_numel(shape); }
  size_t bytes() const { return end - begin; }
};

// The metadata of a safetensors file, from its header alone (the tensors are not read, nor the
// checksum verified): for choosing which checkpoint to load. Errors name the file.
Metadata read_safetensors_metadata(const std::filesystem::path& path);

class SafetensorsFile {
 public:
  // Reads and validates the whole file.
  explicit SafetensorsFile(const std::filesystem::path& path);
  // Maps the file instead (MappedFile): a tensor's pages are read when it is, so a file larger
  // than memory can be read tensor by tensor, each released after use (release()). The header is
  // validated as the constructor's; a checksum, when the metadata holds one, is verified.
  static SafetensorsFile map(const std::filesystem::path& path);
  // Validates bytes already in memory; `label` stands for the path in error messages.
  static SafetensorsFile from_bytes(std::string bytes, const std::string& label);

  const std::string& path() const { return label_; }
  // Tensor names in data-section order.
  const std::vector<std::string>& names() const { return names_; }
  bool has(const std::string& name) const { return index_.count(name) != 0; }
  const SafetensorsInfo& info(const std::string& name) const;  // Error if absent
  const Metadata& metadata() const { return metadata_; }
  // The metadata value, or nullopt when the key is absent.
  std::optional<std::string> metadata_value(const std::string& key) const;

  // The tensor's raw bytes (little-endian, as in the file).
  std::span<const std::byte> bytes(const std::string& name) const;
  // The tensor's F32 values in place. Error if it is not F32 (naming both dtypes) or not
  // 4-byte aligned in memory (possible only in files from other tools; copy_f32_into copes).
  std::span<const float> f32(const std::string& name) const;
  // Gives the memory of a mapped file's tensor back (MappedFile::release); nothing for a file read whole.
  void release(const std::string& name) const;
  // Copies an F32 tensor into dst, which holds shape_numel(expected) floats. Error naming the
  // tensor and both shapes if the file's shape differs, or if the tensor is absent or not F32.
  void copy_f32_into(const std::string& name, float* dst, const Shape& expected) const;

 private:
  SafetensorsFile() = default;
  void parse();
  [[noreturn]] void fail(const std::string& what) const;
  const SafetensorsInfo& require_f32(const std::string& name) const;

  std::string label_;
  // The file's bytes: read whole (a string) or mapped. Shared, so that a moved file keeps them.
  std::shared_ptr<const std::string> owned_;
  std::shared_ptr<const MappedFile> mapped_;
  const char* data_ = nullptr;
  size_t size_ = 0;
  size_t data_start_ = 0;
  std::vector<SafetensorsInfo> infos_;  // data-section order
  std::vector<std::string> names_;
  std::unordered_map<std::string, size_t> index_;
  Metadata metadata_;
};

}  // namespace potop
