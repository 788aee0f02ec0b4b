// A GGUF file (version 3), the format llama.cpp and ggml load: a header, typed key/value
// metadata, a table of tensors (name, dimensions, ggml type, offset), then the tensors' data,
// each aligned to 32 bytes. Little-endian throughout, as every ggml build reads it:
//
//   "GGUF" u32 version=3 u64 n_tensors u64 n_kv
//   n_kv ×      string key, u32 value type, value   (a string: u64 length + bytes;
//                                                      an array: u32 item type, u64 count, items)
//   n_tensors × string name, u32 n_dims, u64 ne[n_dims], u32 ggml type, u64 offset
//   zero padding to the alignment, then the data; each tensor's offset is from the data's start
//
// ne[0] is the dimension that varies fastest: a matrix of `rows` rows of `cols` values has
// ne = {cols, rows}. This file knows the format only; a model's folder says what it puts in it
// (models/gpt/gpt_gguf.h: a GPT, models/llama/llama_gguf.h: a Llama).
#pragma once
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/gguf_file.h"  // GgmlType, ggml_row_bytes, kGgufVersion, kGgufAlignment

namespace potop {

class GgufWriter {
 public:
  // Metadata, written in the order added. A key added twice is a bug (POTOP_CHECK).
  void add_u32(const std::string& key, uint32_t value);
  void add_i32(const std::string& key, int32_t value);
  void add_f32(const std::string& key, float value);
  void add_bool(const std::string& key, bool value);
  void add_string(const std::string& key, const std::string& value);
  void add_strings(const std::string& key, const std::vector<std::string>& values);
  void add_f32s(const std::string& key, const std::vector<float>& values);
  void add_i32s(const std::string& key, const std::vector<int32_t>& values);

  // A tensor of dimensions ne (fastest first) whose data, in `type`, is `bytes` (its size must be
  // what ne and type make: a bug otherwise).
  void add_tensor(const std::string& name, std::vector<uint64_t> ne, GgmlType type, std::vector<uint8_t> bytes);

  size_t tensor_count() const { return tensors_.size(); }
  // The whole file's size in bytes.
  size_t file_bytes() const;
  // Writes the file atomically (core/file_io.h): on any failure nothing is left at `path`, and a
  // potop::Error names it.
  void write(const std::filesystem::path& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> ne;
    GgmlType type;
    std::vector<uint8_t> bytes;
  };
  void start_kv(const std::string& key, uint32_t type);
  std::string header() const;  // everything before the data, padding included

  std::string kv_;  // the key/value section, serialized as it is added
  uint64_t kv_count_ = 0;
  std::set<std::string> keys_;
  std::vector<Tensor> tensors_;
};

// What --type writes the weight matrices as: f32, f16, q8_0 or q4_0. 1-D tensors (norms, biases)
// and the position table stay f32, as llama.cpp's converter keeps them; a matrix whose rows are
// not whole q8_0/q4_0 blocks (32 values) falls back to f16, with a note (export/gguf_tensors.h).
GgmlType parse_gguf_weight_type(const std::string& name, const std::string& flag);

}  // namespace potop
