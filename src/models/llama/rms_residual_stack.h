// Llama's blocks: sub-layers in pre-norm residual connections with RMSNorm,
//
//   x ← x + dropout(f(RMSNorm(x)))  for each sub-layer f,  then the output RMSNorm_final(x)
//
// the pre-LN half of nn/residual_stack.h with RMSNorm's gain alone (no mean, no bias). The add
// that ends sub-layer k and the norm that starts sub-layer k + 1 read the same rows, so they run
// as one fused kernel. Kept per sub-layer k: the sum x_k + o_k, the norm's output and its 1/rms.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/layer.h"

namespace potop {

class RmsResidualStack {
 public:
  RmsResidualStack(LayerBuilder& b, int n_embd, float eps);

  // An RMSNorm's gain (init 1, not decayed), declared where the caller wants it in the checkpoint.
  static ParamId norm_weight(LayerBuilder& b, const std::string& name, int n_embd);

  // Appends a sub-layer with its norm, whose gain the caller declared first.
  void add(LayerBuilder& b, ParamId norm, std::unique_ptr<SubLayer> sublayer);
  void set_final_norm(LayerBuilder& b, ParamId norm);

  int size() const { return static_cast<int>(layers_.size()); }

  // Runs every sub-layer on x (N, C), which the caller keeps until backward; returns
  // RMSNorm_final(x_K) (N, C).
  const float* forward(const float* x, const LayerPass& pass, const Frame& f) const;

  // The caller writes d output into output_grad(f); backward() returns d x and a free (N, C) buffer.
  float* output_grad(const Frame& f) const { return f.buffer(d_other_); }
  struct InputGrad {
    const float* dx;
    float* free;
  };
  InputGrad backward(const float* x, const LayerPass& pass, const Frame& f) const;

 private:
  struct Norm {
    ParamId weight;
    BufferId out, rstd;
  };
  struct Entry {
    Norm norm;
    std::unique_ptr<SubLayer> sublayer;
    int dropout_site;
    BufferId sum;  // x_k + dropout(o_k)
  };
  Norm plan_norm(LayerBuilder& b, ParamId weight);
  const float* stream_before(int k, const float* x, const Frame& f) const;

  int n_embd_;
  float eps_;
  std::vector<Entry> layers_;
  std::unique_ptr<Norm> final_;
  BufferId branch_, d_stream_, d_other_;
};

}  // namespace potop
