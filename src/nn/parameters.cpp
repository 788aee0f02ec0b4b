#include "nn/parameters.h"

#include <algorithm>
#include <cstdint>

#include <sys/mman.h>

#include "core/profile.h"
#include "core/rng.h"
#include "kernels/quant_interleaved.h"

namespace potop {

ParameterSet::ParameterSet(Layout layout)
    : layout_(std::move(layout)), values_(std::make_shared<Arena>(layout_)) {}

namespace {

// A quantized matrix given as rows, in the layout this CPU multiplies fastest (quant_best_layout).
void to_best_layout(QuantizedMatrix& m) {
  if (quant_best_layout(m.type) != QuantLayout::kInterleaved) return;
  const std::vector<uint8_t> stripes = quant_rows_to_interleaved(m.type, m.data.data(), m.rows, m.cols);
  m.data.assign(stripes.begin(), stripes.end());
  m.layout = QuantLayout::kInterleaved;
}

}  // namespace

ParameterSet ParameterSet::replica() const {
  ParameterSet r;
  r.layout_ = layout_;
  r.values_ = values_;
  r.quantized_ = quantized_;
  r.copies_ = copies_;
  return r;
}

void ParameterSet::quantize_output_tables(QuantType type) {
  for (size_t i = 0; i < layout_.specs().size(); ++i) {
    const TensorSpec& s = layout_.specs()[i];
    if (!s.output_table) continue;
    const int N = static_cast<int>(s.shape[0]), K = static_cast<int>(s.shape[1]);
    if (!quant_row_fits(type, K)) continue;
    QuantizedMatrix m{type, N, K, QuantLayout::kRows, {}};
    m.data.resize(static_cast<size_t>(N) * m.row_bytes());
    const float* table = value(static_cast<ParamId>(i));
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; ++n)
      quantize_row(type, table + static_cast<size_t>(n) * K, K, m.data.data() + static_cast<size_t>(n) * m.row_bytes());
    set_quantized_copy(static_cast<ParamId>(i), std::move(m));
  }
}

void ParameterSet::set_quantized_copy(ParamId id, QuantizedMatrix m) {
  const TensorSpec& s = spec(id);
  POTOP_CHECK(s.output_table && s.shape.size() == 2 && m.rows == s.shape[0] && m.cols == s.shape[1] &&
                  m.layout == QuantLayout::kRows && m.data.size() == static_cast<size_t>(m.rows) * m.row_bytes(),
              s.name + ": a quantized copy of the wrong shape");
  to_best_layout(m);
  if (!copies_) copies_ = std::make_shared<std::map<ParamId, QuantizedMatrix>>();
  (*copies_)[id] = std::move(m);
}

std::vector<uint8_t> QuantizedMatrix::rows_data() const {
  return layout == QuantLayout::kRows ? std::vector<uint8_t>(data.begin(), data.end())
                                      : quant_interleaved_to_rows(type, data.data(), rows, cols);
}

void ParameterSet::set_quantized(ParamId id, QuantizedMatrix m) {
  const TensorSpec& s = spec(id);
  POTOP_CHECK(s.matrix && m.cols == s.shape[0] && m.rows == s.shape[1] &&
                  m.data.size() == static_cast<size_t>(m.rows) * m.row_bytes(),
              s.name + ": a quantized matrix of the wrong shape");
  POTOP_CHECK(m.layout == QuantLayout::kRows, s.name + ": set_quantized takes a matrix as rows");
  to_best_layout(m);
  if (!quantized_) quantized_ = std::make_shared<std::map<ParamId, QuantizedMatrix>>();
  (*quantized_)[id] = std::move(m);
  // The float values are never read again: zero them and give their whole pages back.
  float* w = value(id);
  std::fill_n(w, s.numel, 0.0f);
  const uintptr_t page = 4096, begin = reinterpret_cast<uintptr_t>(w), end = begin + s.numel * sizeof(float);
  const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

std::vector<float> ParameterSet::dense_values(ParamId id) const {
  const TensorSpec& s = spec(id);
  const QuantizedMatrix* q = quantized(id);
  if (!q) return std::vector<float>(value(id), value(id) + s.numel);
  std::vector<float> w(s.numel), row(static_cast<size_t>(q->cols));
  const std::vector<uint8_t> rows = q->rows_data();
  for (int n = 0; n < q->rows; ++n) {
    dequantize_row(q->type, rows.data() + static_cast<size_t>(n) * q->row_bytes(), q->cols, row.data());
    for (int k = 0; k < q->cols; ++k) w[static_cast<size_t>(k) * q->rows + n] = row[static_cast<size_t>(k)];
  }
  return w;
}

std::string ParameterSet::quantization() const {
  std::vector<QuantType> types;
  if (quantized_)
    for (const auto& [id, m] : *quantized_) types.push_back(m.type);
  return quant_types_name(types);
}

Arena& ParameterSet::grads() {
  if (!grads_.data()) grads_ = Arena(layout_);
  return grads_;
}

void ParameterSet::init(uint64_t seed) {
  Rng rng(seed);
  for (const TensorSpec& spec : layout_.specs()) {
    float* w = values_->at(spec);
    switch (spec.init.kind) {
      case TensorInit::Kind::kZeros: std::fill_n(w, spec.numel, 0.0f); break;
      case TensorInit::Kind::kOnes: std::fill_n(w, spec.numel, 1.0f); break;
      case TensorInit::Kind::kNormal:
        for (size_t i = 0; i < spec.numel; ++i) w[i] = static_cast<float>(rng.normal() * spec.init.std);
        break;
    }
  }
}

void ParameterSet::zero_grad() { POTOP_PROFILED("zero_grad", grads().zero()); }

}  // namespace potop
