// The position-wise feed-forward sub-layer: out = f(in·W₁ + b₁)·W₂ + b₂, with f = GELU (GPT-2's
// tanh form) or ReLU (the paper's max(0, ·)), applied to every position alike. Parameters use
// Hugging Face's GPT-2 names: <prefix>.c_fc (C, hidden) and <prefix>.c_proj (hidden, C).
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
};

class MlpLayer final : public SubLayer {
 public:
  MlpLayer(LayerBuilder& b, const std::string& prefix, const MlpConfig& config);

  void forward(float* out, const float* in, const LayerPass& pass, const Frame& f) const override;
  void backward(float* din, const float* dout, const float* in, GradStore store, const LayerPass& pass,
                const Frame& f) const override;

 private:
  MlpConfig c_;
  ParamId fc_w_ = kNoParam, fc_b_ = kNoParam, proj_w_ = kNoParam, proj_b_ = kNoParam;
  BufferId pre_, act_;  // kept: (N, hidden) before and after the non-linearity
  BufferId dhidden_;    // scratch: (N, hidden), d of the activation's output, then of its input
};

}  // namespace potop
