// The position-wise feed-forward sub-layer: out = f(in·W₁ + b₁)·W₂ + b₂, with f = GELU (GPT-2's
// tanh form), ReLU (the paper's max(0, ·)) or BERT's exact GELU, applied to every position alike;
// or the gated SwiGLU (Shazeer 2020, Llama's): out = (silu(in·W_gate) ⊙ in·W_up)·W₂, W_gate and
// W_up the two column blocks of one fused W₁ (C, 2·hidden), so both are one matrix product.
// Parameters use Hugging Face's GPT-2 names by default: <prefix>.c_fc (C, hidden) and
// <prefix>.c_proj (hidden, C) (a Llama's names are gate_up_proj and down_proj: the config names them).
#pragma once
#include <string>

#include "nn/transformer_config.h"
#include "nn/layer.h"

namespace potop {

struct MlpConfig {
  int n_embd = 0;       // C
  int hidden = 0;       // 4C in GPT-2 and the paper
  Activation activation = Activation::kGelu;
  bool bias = true;
  double proj_std = 0.02;  // init of W₂, which feeds the residual stream
  std::string in_name = "c_fc", out_name = "c_proj";  // <prefix>.<name>.weight, .bias
};

// pre (N, H) += bias, act (N, H) = f(pre); f one of the ungated activations (GELU, ReLU, BERT's
// exact GELU). Its backward: d (N, H), d act on entry, becomes d pre in place, and
// dbias (H) gets Σ_n d pre.
void bias_activation_forward(Activation f, float* act, float* pre, const float* bias, int N, int H);
void bias_activation_backward(Activation f, float* d, float* dbias, const float* pre, int N, int H);

class MlpLayer final : public SubLayer {
 public:
  MlpLayer(LayerBuilder& b, const std::string& prefix, const MlpConfig& config);

  void forward(float* out, const float* in, const LayerPass& pass, const Frame& f) const override;
  void backward(float* din, const float* dout, const float* in, GradStore store, const LayerPass& pass,
                const Frame& f) const override;

 private:
  bool gated() const { return c_.activation == Activation::kSwiGlu; }
  int in_width() const { return gated() ? 2 * c_.hidden : c_.hidden; }  // of W₁'s output

  MlpConfig c_;
  ParamId fc_w_ = kNoParam, fc_b_ = kNoParam, proj_w_ = kNoParam, proj_b_ = kNoParam;
  BufferId pre_, act_;  // kept: (N, in_width) before and (N, hidden) after the non-linearity
  // Scratch: (N, hidden), d of the activation's output (then of its input, when not gated); gated,
  // (N, 2·hidden) d of [gate | up].
  BufferId dhidden_, dpre_ = -1;
};

}  // namespace potop
