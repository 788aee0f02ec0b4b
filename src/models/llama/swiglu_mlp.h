// Llama's feed-forward sub-layer: out = down(silu(gate(in)) ⊙ up(in)), without biases.
// Hugging Face's gate_proj (C, F) and up_proj (C, F) are the two column blocks of one fused
// mlp.gate_up_proj (C, 2F), so the two projections are one matrix product; down_proj is (F, C).
#pragma once
#include <string>

#include "nn/layer.h"

namespace potop {

class SwiGluMlp final : public SubLayer {
 public:
  SwiGluMlp(LayerBuilder& b, const std::string& prefix, int n_embd, int hidden, double proj_std);

  void forward(float* out, const float* in, const LayerPass& pass, const Frame& f) const override;
  void backward(float* din, const float* dout, const float* in, GradStore store, const LayerPass& pass,
                const Frame& f) const override;

 private:
  int C_, F_;
  ParamId gate_up_w_, down_w_;
  BufferId gate_up_, act_;       // kept: (N, 2F) [gate | up], and (N, F) silu(gate) ⊙ up
  BufferId dact_, dgate_up_;     // scratch
};

}  // namespace potop
