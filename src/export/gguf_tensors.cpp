#include "export/gguf_tensors.h"

#include <cstring>

#include "core/error.h"
#include "kernels/quant.h"

namespace potop {

uint32_t gguf_file_type(GgmlType t) {
  switch (t) {
    case GgmlType::kF32: return 0;   // LLAMA_FTYPE_ALL_F32
    case GgmlType::kF16: return 1;   // LLAMA_FTYPE_MOSTLY_F16
    case GgmlType::kQ4_0: return 2;  // LLAMA_FTYPE_MOSTLY_Q4_0
    case GgmlType::kQ8_0: return 7;  // LLAMA_FTYPE_MOSTLY_Q8_0
    case GgmlType::kBF16: return 32;  // LLAMA_FTYPE_MOSTLY_BF16 (potop writes no bf16)
  }
  return 0;
}

std::vector<float> transposed(const std::vector<float>& x, int64_t rows, int64_t cols) {
  POTOP_CHECK(static_cast<int64_t>(x.size()) == rows * cols, "transposed: not a rows × cols matrix");
  std::vector<float> t(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[static_cast<size_t>(c * rows + r)] = x[static_cast<size_t>(r * cols + c)];
  return t;
}

ParamId GgufTensors::find(const std::string& name) const {
  const TensorSpec* spec = params_.layout().find(name);
  return spec ? static_cast<ParamId>(spec - params_.layout().specs().data()) : kNoParam;
}

std::vector<float> GgufTensors::values(const std::string& name, const std::string& model) const {
  const ParamId id = find(name);
  POTOP_CHECK(id != kNoParam, model + " has no " + name);
  return params_.dense_values(id);
}

const Shape& GgufTensors::shape(const std::string& name, const std::string& model) const {
  const ParamId id = find(name);
  POTOP_CHECK(id != kNoParam, model + " has no " + name);
  return params_.spec(id).shape;
}

void GgufTensors::vector(const std::string& gguf, const std::vector<float>& v) {
  add(gguf, v, static_cast<int64_t>(v.size()), 1, GgmlType::kF32, false);
}

void GgufTensors::matrix(const std::string& gguf, const std::vector<float>& v, int64_t rows, int64_t cols) {
  matrix(gguf, v, rows, cols, weights_);
}

void GgufTensors::matrix(const std::string& gguf, const std::vector<float>& v, int64_t rows, int64_t cols,
                         GgmlType type) {
  POTOP_CHECK(static_cast<int64_t>(v.size()) == rows * cols, gguf + ": not a rows × cols matrix");
  add(gguf, v, cols, rows, type, true);
}

// rows × cols floats as a tensor of `type`: a matrix ne = {cols, rows}, or a vector ne = {cols}.
void GgufTensors::add(const std::string& name, const std::vector<float>& v, int64_t cols, int64_t rows, GgmlType type,
                      bool matrix) {
  if ((type == GgmlType::kQ8_0 || type == GgmlType::kQ4_0) &&
      !quant_row_fits(QuantType::kQ8_0, static_cast<int>(cols))) {
    notes_.push_back(name + ": rows of " + std::to_string(cols) + " values are not whole " + to_string(type) +
                     " blocks of 32: f16");
    type = GgmlType::kF16;
  }
  const size_t row_bytes = ggml_row_bytes(type, cols);
  std::vector<uint8_t> bytes(row_bytes * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = v.data() + r * cols;
    uint8_t* out = bytes.data() + static_cast<size_t>(r) * row_bytes;
    switch (type) {
      case GgmlType::kF32: std::memcpy(out, row, row_bytes); break;
      case GgmlType::kF16: quantize_row(QuantType::kF16, row, static_cast<int>(cols), out); break;
      case GgmlType::kQ8_0: quantize_row(QuantType::kQ8_0, row, static_cast<int>(cols), out); break;
      case GgmlType::kQ4_0: quantize_row(QuantType::kQ4_0, row, static_cast<int>(cols), out); break;
      case GgmlType::kBF16: POTOP_CHECK(false, "potop writes no bf16 tensors"); break;
    }
  }
  std::vector<uint64_t> ne{static_cast<uint64_t>(cols)};
  if (matrix) ne.push_back(static_cast<uint64_t>(rows));
  w_.add_tensor(name, std::move(ne), type, std::move(bytes));
}

}  // namespace potop
