// What every model's GGUF writer (models/<name>/<name>_gguf.h) does with its tensors: potop's
// (in, out) weights turned into ggml's rows, written f32 or in the weight type of --type, and the
// general.file_type key for that type. The model's writer says which tensors, under which names.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "export/gguf_writer.h"
#include "nn/parameters.h"

namespace potop {

// general.file_type (llama.cpp's llama_ftype) of a file whose weight matrices are `weights`.
uint32_t gguf_file_type(GgmlType weights);

// (rows, cols) row-major -> (cols, rows) row-major: potop's (in, out) weight as `out` rows of `in`.
std::vector<float> transposed(const std::vector<float>& x, int64_t rows, int64_t cols);

// Tensors into a GgufWriter: vectors as f32, matrices in the weight type. A matrix whose rows are
// not whole blocks of 32 values cannot be q8_0 or q4_0: it is written f16, and a note says so.
class GgufTensors {
 public:
  GgufTensors(const ParameterSet& params, GgufWriter& w, GgmlType weights, std::vector<std::string>& notes)
      : params_(params), w_(w), weights_(weights), notes_(notes) {}

  // The model's tensor `name`: kNoParam when it has none.
  ParamId find(const std::string& name) const;
  // Its values, as floats (a quantized matrix dequantized: ParameterSet::dense_values); a missing
  // tensor is a bug (`model` names the model in the message).
  std::vector<float> values(const std::string& name, const std::string& model) const;
  // Its shape; a missing tensor is a bug, as for values().
  const Shape& shape(const std::string& name, const std::string& model) const;

  // A 1-D tensor of v.size() values (a norm's gain, a bias), f32.
  void vector(const std::string& gguf, const std::vector<float>& v);
  // rows × cols values, row-major, as a matrix ne = {cols, rows}: in the weight type, or in `type`.
  void matrix(const std::string& gguf, const std::vector<float>& v, int64_t rows, int64_t cols);
  void matrix(const std::string& gguf, const std::vector<float>& v, int64_t rows, int64_t cols, GgmlType type);

  GgmlType weights() const { return weights_; }

 private:
  void add(const std::string& name, const std::vector<float>& v, int64_t cols, int64_t rows, GgmlType type,
           bool matrix);

  const ParameterSet& params_;
  GgufWriter& w_;
  GgmlType weights_;
  std::vector<std::string>& notes_;
};

}  // namespace potop
