// A GGUF file read back (the format of llama.cpp's ggml/src/gguf.cpp, versions 2 and 3), for
// `potop import FILE.gguf` (checkpoint/gguf_import.h). The layout is export/gguf_writer.h's:
//
//   "GGUF" u32 version u64 n_tensors u64 n_kv
//   n_kv ×      string key, u32 value type, value
//   n_tensors × string name, u32 n_dims, u64 ne[n_dims], u32 ggml type, u64 offset
//   padding to general.alignment (32 unless the file says otherwise), then the tensors' data
//
// The file is mapped, never read whole: a tensor's pages are read when it is, and given back
// after (release). Everything is checked against the file's size before it is read, so a
// truncated or hostile file is an Error naming the file and what is wrong, never a read past
// its end.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/file_io.h"

namespace potop {

// ggml's tensor types (enum ggml_type): the ones potop reads and writes, named; to_string gives
// ggml's name of any other ("q4_K") for the error that refuses it.
enum class GgmlType : uint32_t { kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ8_0 = 8, kBF16 = 30 };
std::string to_string(GgmlType type);  // "f32", "f16", "q4_0", "q8_0", "bf16", or ggml's name
// Bytes of a row of n values, for the five types above; n must be a multiple of 32 for q4_0 and
// q8_0 (a bug otherwise).
size_t ggml_row_bytes(GgmlType type, int64_t n);
// Whether potop reads tensors of this type.
bool ggml_type_known(GgmlType type);

inline constexpr uint32_t kGgufVersion = 3;
inline constexpr size_t kGgufAlignment = 32;  // general.alignment's default

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> ne;  // dimensions, the fastest first: a matrix of R rows of K is {K, R}
  GgmlType type;
  uint64_t offset = 0;  // from the data's start
  size_t bytes = 0;

  int64_t row_length() const { return ne.empty() ? 1 : ne[0]; }
  int64_t rows() const;  // the product of ne[1..]
};

class GgufFile {
 public:
  explicit GgufFile(const std::filesystem::path& path);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  // The key/value metadata as JSON: numbers, booleans, strings, and arrays of them.
  const nlohmann::json& metadata() const { return metadata_; }
  // A string value; Error naming the file and the key when it is absent or not a string.
  std::string string(const std::string& key) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find(const std::string& name) const;
  // The tensor's bytes (info.bytes of them) in the mapping.
  const uint8_t* data(const GgufTensorInfo& info) const;
  // Gives the tensor's pages back (they are read again if touched).
  void release(const GgufTensorInfo& info) const;
  // A tensor's values as float32 (f32, f16, bf16, q8_0 and q4_0 dequantized), n = the product of
  // its ne; another type is an Error naming the file, the tensor and its type.
  void read_floats(const GgufTensorInfo& info, float* dst) const;

 private:
  std::string path_;
  std::unique_ptr<MappedFile> file_;
  uint32_t version_ = 0;
  nlohmann::json metadata_ = nlohmann::json::object();
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t> index_;
  size_t data_start_ = 0;
};

}  // namespace potop
