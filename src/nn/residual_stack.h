// Sub-layers wrapped in residual connections and a norm — "Add & Norm" — the body of every
// Transformer: a GPT's or a Llama's blocks, an encoder's, a decoder's. The placement of the norm
// is a choice:
//
//   post-LN (the paper):  x ← LN(x + dropout(f(x)))                    for each sub-layer f
//   pre-LN  (GPT-2):      x ← x + dropout(f(LN(x))) for each f, then the output LN_final(x)
//
// and so is the norm: LayerNorm (kernels/layernorm.h), or RMSNorm (kernels/rmsnorm.h: a gain
// alone, no mean, no bias; Llama's, pre-LN only). Each sub-layer comes with its own norm (GPT-2
// names: ln_1 before attention, ln_2 before the MLP); pre-LN adds the final one (ln_f). In pre-LN
// the add that ends sub-layer k and the norm that starts sub-layer k + 1 read the same rows, so
// they run as one fused kernel.
//
// Kept per sub-layer k: the sum x_k + o_k, the norm's output and its 1/std (and LayerNorm's mean).
// Backward scratch: two (N, C) gradients of the residual stream, shared with every other stack.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kernels/layernorm.h"
#include "nn/transformer_config.h"
#include "nn/layer.h"

namespace potop {

// A norm's gain (init 1) and bias (init 0, absent without biases: always for RMSNorm), neither decayed.
struct LayerNormParams {
  LayerNormParams(LayerBuilder& b, const std::string& prefix, int n_embd, bool with_bias);
  ParamId weight = kNoParam, bias = kNoParam;
};

class ResidualStack {
 public:
  // eps: the norms' (kernels/layernorm.h; BERT's is 1e-12).
  ResidualStack(LayerBuilder& b, NormPlacement norm, int n_embd, float eps = kLayerNormEps,
                NormKind kind = NormKind::kLayerNorm);

  // Appends a sub-layer with its LayerNorm, which the caller declared first (checkpoint order:
  // the norm's tensors, then the sub-layer's).
  void add(LayerBuilder& b, const LayerNormParams& norm, std::unique_ptr<SubLayer> sublayer);
  // Pre-LN only: the LayerNorm of the stack's output.
  void set_final_norm(LayerBuilder& b, const LayerNormParams& norm);

  NormPlacement placement() const { return placement_; }
  int size() const { return static_cast<int>(layers_.size()); }
  const SubLayer& sublayer(int k) const { return *layers_[k].sublayer; }

  // Runs every sub-layer on x (N, C), which the caller keeps until backward. Returns the output
  // (N, C): LN_final(x_K) for pre-LN, x_K for post-LN.
  const float* forward(const float* x, const LayerPass& pass, const Frame& f) const;

  // Backward, in two steps: the caller writes d output (overwriting) into output_grad(f), then
  // backward() propagates it to d x, the gradient of the stack's input, and returns it with a
  // buffer of the same size that holds nothing needed any more (scratch for the caller).
  float* output_grad(const Frame& f) const;
  struct InputGrad {
    const float* dx;  // (N, C)
    float* free;      // (N, C)
  };
  InputGrad backward(const float* x, const LayerPass& pass, const Frame& f) const;

 private:
  struct Norm {
    LayerNormParams params;
    BufferId out, mean, rstd;  // mean: LayerNorm's
  };
  struct Entry {
    Norm norm;
    std::unique_ptr<SubLayer> sublayer;
    int dropout_site;  // on the sub-layer's output, before the add
    BufferId sum;      // x_k + dropout(o_k)
  };
  Norm plan_norm(LayerBuilder& b, const LayerNormParams& params);
  // The residual stream before sub-layer k (the stack's input for k = 0).
  const float* stream_before(int k, const float* x, const Frame& f) const;
  // The norm m of x (N rows) into its buffers; of the sum a + b, kept in sum; its backward.
  void norm_forward(const Norm& m, const float* x, int N, const Frame& f) const;
  void residual_norm_forward(float* sum, const Norm& m, const float* a, const float* b, int N, const Frame& f) const;
  void norm_backward(float* dinp, const float* dout, const float* inp, const Norm& m, int N, GradStore store,
                     const Frame& f) const;

  NormPlacement placement_;
  NormKind kind_;
  int n_embd_;
  float eps_;
  std::vector<Entry> layers_;
  std::unique_ptr<Norm> final_;  // pre-LN
  BufferId branch_;              // o_k, the current sub-layer's output: read at once by the add
  BufferId d_stream_, d_other_;  // scratch
};

}  // namespace potop
