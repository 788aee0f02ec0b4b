// The output of a language model: logits (N, V) = x · wteᵀ, the token embedding read as the
// output projection (tied weights, as GPT-2 and the paper), and the mean cross-entropy of the
// targets, over the positions whose target is counted (>= 0), optionally label-smoothed (the
// paper's ε = 0.1: the target distribution (1 - ε)·onehot + ε/V).
// The table need not be the token embedding: the bag-of-words LM (model/bow.h) passes its own
// (V, F) output matrix and an output bias (V): logits = x·Wᵀ + bias.
#pragma once
#include "nn/layer.h"

namespace potop {

class TiedLMHead {
 public:
  TiedLMHead(LayerBuilder& b, ParamId token_table, int vocab_size, int n_embd, ParamId bias = kNoParam,
             float label_smoothing = 0.0f);

  // logits = x·wteᵀ; with targets also the per-position losses. Returns the mean loss over the
  // counted targets and sets counted (0 and 0 without targets).
  float forward(const float* x, const int* targets, const LayerPass& pass, const Frame& f, int& counted) const;
  const float* logits(const Activations& a) const { return a[logits_]; }  // (N, V)
  const float* losses(const Activations& a) const { return a[losses_]; }  // (N)

  // dx (N, C) = ∂(loss_scale · mean loss)/∂x, overwritten; the tied table's gradient accumulates.
  void backward(float* dx, float loss_scale, int counted, const float* x, const int* targets, const LayerPass& pass,
                const Frame& f) const;

 private:
  ParamId wte_, bias_;  // bias_: kNoParam for the GPT
  int V_, C_;
  float label_smoothing_;
  BufferId logits_, probs_, losses_;  // kept: (N, V), (N, V) reused as d logits, (N)
  BufferId dlosses_;                  // scratch: (N)
};

}  // namespace potop
