// A model's parameters as data: one Layout (names, shapes, and each tensor's init rule and
// weight-decay flag), the values in one Arena and their gradients in another. Everything that
// walks the parameters — initialisation, AdamW, checkpoints, the training state, gradient
// clipping — takes a ParameterSet and reads what it needs from the specs; nothing looks at a
// tensor's name to decide what to do with it.
//
// Layers declare their tensors while the model is built (ParamId is the index of the spec), then
// the set allocates them once. A replica (batch-parallel training, model.h) shares the values —
// the same memory, so an optimizer step is seen by all — and has gradients of its own.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/arena.h"
#include "core/error.h"
#include "core/pages.h"
#include "kernels/quant.h"

namespace potop {

using ParamId = int32_t;
inline constexpr ParamId kNoParam = -1;  // an optional tensor that this model does not have

// A matrix W (in = K, out = N) of a model loaded for inference in fewer bits: Wᵀ as N rows of K
// quantized weights (kernels/quant.h), the layout of a ggml tensor, or those rows interleaved
// sixteen at a time where this CPU's kernel reads them so (quant_interleaved.h). Its float values
// are not kept.
struct QuantizedMatrix {
  QuantType type = QuantType::kQ8_0;
  int rows = 0;  // N: W's outputs
  int cols = 0;  // K: W's inputs, the length of each dot product
  QuantLayout layout = QuantLayout::kRows;
  // kRows: rows · quant_row_bytes(type, cols) bytes; kInterleaved: quant_interleaved_bytes(type, rows, cols)
  PageBytes data;

  size_t row_bytes() const { return quant_row_bytes(type, cols); }
  // The rows layout (the files'): data itself, or a copy of it rearranged back.
  std::vector<uint8_t> rows_data() const;
};

class ParameterSet {
 public:
  ParameterSet() = default;
  // Allocates zeroed values for every tensor of the layout (gradients come on first use).
  explicit ParameterSet(Layout layout);

  // Same layout and values (shared memory), its own gradients.
  ParameterSet replica() const;

  const Layout& layout() const { return layout_; }
  const TensorSpec& spec(ParamId id) const { return layout_.specs()[static_cast<size_t>(id)]; }
  size_t count() const { return layout_.count(); }  // parameters, without alignment padding

  // Quantized matrices (QuantizedMatrix), shared with the replicas. A model with any is for
  // inference only: the values of those tensors stay zero, and training refuses it.
  const QuantizedMatrix* quantized(ParamId id) const {
    if (!quantized_ || id == kNoParam) return nullptr;
    const auto it = quantized_->find(id);
    return it == quantized_->end() ? nullptr : &it->second;
  }
  bool any_quantized() const { return quantized_ && !quantized_->empty(); }
  // Stores tensor `id` (a matrix) quantized, m in the rows layout, and releases its float values'
  // memory. It keeps m in the layout this CPU multiplies fastest (quant_best_layout).
  void set_quantized(ParamId id, QuantizedMatrix m);
  // The output tables (TensorSpec::output_table) of a model whose matrices are quantized, as
  // quantized copies: an LM head over 50257 tokens is a third of GPT-2 124M's weights, read
  // whole for every generated token. The float values stay (a lookup reads a few rows of them,
  // and the checkpoint keeps them: the copies are made again when a quantized model is loaded).
  // Tables whose rows are not whole blocks of `type` get none.
  void quantize_output_tables(QuantType type);
  const QuantizedMatrix* quantized_copy(ParamId id) const {
    if (!copies_ || id == kNoParam) return nullptr;
    const auto it = copies_->find(id);
    return it == copies_->end() ? nullptr : &it->second;
  }
  // Replaces one copy (m as rows, (rows, K) of the table): the tests' way to see what reads it.
  void set_quantized_copy(ParamId id, QuantizedMatrix m);
  // W (in, out) as floats: the values, or the quantized rows dequantized and transposed back.
  std::vector<float> dense_values(ParamId id) const;
  // "q8_0", or "q8_0+f16" when the matrices were quantized to several types; "" when none is.
  std::string quantization() const;

  Arena& values() { return *values_; }
  const Arena& values() const { return *values_; }
  Arena& grads();  // allocated (zeroed) on first use: inference never needs them
  bool has_grads() const { return grads_.data() != nullptr; }

  // The tensor's values or gradient; null for kNoParam.
  float* value(ParamId id) const { return id == kNoParam ? nullptr : values_->at(spec(id)); }
  float* grad(ParamId id) {
    return id == kNoParam ? nullptr : grads().at(spec(id));
  }

  // Draws every tensor by its init rule, in layout order, from one generator seeded with `seed`.
  void init(uint64_t seed);
  void zero_grad();

  // Backward passes say, as they go, that the gradients of tensor `first` and of every tensor
  // declared after it are final for this pass (the residual stack after each sub-layer: the
  // layers are declared in the order the forward pass runs them, so backward finishes them from
  // the last declared down). Multi-process training starts exchanging those gradients then,
  // while the backward pass of the earlier layers runs (train/train_step.cpp). No hook: nothing.
  using GradsFinalHook = std::function<void(ParamId first)>;
  void set_grads_final_hook(GradsFinalHook hook) { grads_final_ = std::move(hook); }
  void grads_final_from(ParamId first) const {
    if (grads_final_) grads_final_(first);
  }

 private:
  GradsFinalHook grads_final_;
  Layout layout_;
  std::shared_ptr<std::map<ParamId, QuantizedMatrix>> quantized_;
  std::shared_ptr<std::map<ParamId, QuantizedMatrix>> copies_;  // of the output tables
  std::shared_ptr<Arena> values_;
  Arena grads_;
};

// Declares one parameter tensor in a layout being built (the layers' constructors call it).
inline ParamId declare(Layout& layout, const std::string& name, const Shape& shape, TensorInit init, bool decay) {
  return static_cast<ParamId>(layout.add(name, shape, init, decay));
}

}  // namespace potop
