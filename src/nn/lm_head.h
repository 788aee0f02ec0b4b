// The output of a language model: logits (N, V) = x · wteᵀ, the token embedding read as the
// output projection (tied weights, as GPT-2 and the paper), and the mean cross-entropy of the
// targets, over the positions whose target is counted (>= 0), optionally label-smoothed (the
// paper's ε = 0.1: the target distribution (1 - ε)·onehot + ε/V).
// The table need not be the token embedding: the bag-of-words LM (model/bow.h) passes its own
// (V, F) output matrix and an output bias (V): logits = x·Wᵀ + bias.
//
// Training over a large vocabulary would keep (rows × V) logits and probabilities: for GPT-2's
// 50257 tokens and a batch of 4 × 1024 positions, 0.8 GB each. So a loss-only pass
// (LayerPass::loss_only) whose logits would exceed LMHeadChunks::whole_floats takes its rows a
// chunk at a time instead: the forward keeps only the losses, and the backward computes each
// chunk's logits once more (one more x·Wᵀ GEMM, about 9% of GPT-2 124M's step) and turns them
// into gradients. Smaller passes keep their whole logits, as they always did, bit for bit.
//
// In a quantized model (potop quantize) the table is multiplied through its quantized copy
// (ParameterSet::quantize_output_tables), as llama.cpp stores GPT-2's tied output layer.
#pragma once
#include <cstdint>

#include "nn/layer.h"

namespace potop {

struct LMHeadChunks {
  int64_t whole_floats = int64_t{32} << 20;  // logits up to 128 MB are kept whole
  int64_t chunk_floats = int64_t{8} << 20;   // else chunks of 32 MB (at least one row)
};
const LMHeadChunks& lm_head_chunks();
void set_lm_head_chunks(const LMHeadChunks& chunks);  // tests force chunks on small models

class TiedLMHead {
 public:
  TiedLMHead(LayerBuilder& b, ParamId token_table, int vocab_size, int n_embd, ParamId bias = kNoParam,
             float label_smoothing = 0.0f);

  // Rows of logits a pass of `rows` positions keeps: all of them, or one chunk's (see above).
  static int64_t kept_rows(int64_t rows, int vocab_size, bool loss_only);

  // logits = x·wteᵀ; with targets also the per-position losses. Returns the mean loss over the
  // counted targets and sets counted (0 and 0 without targets).
  float forward(const float* x, const int* targets, const LayerPass& pass, const Frame& f, int& counted) const;
  const float* logits(const Activations& a) const { return a[logits_]; }  // (N, V), unless the pass was chunked
  const float* losses(const Activations& a) const { return a[losses_]; }  // (N)

  // dx (N, C) = ∂(loss_scale · mean loss)/∂x, overwritten; the tied table's gradient accumulates.
  void backward(float* dx, float loss_scale, int counted, const float* x, const int* targets, const LayerPass& pass,
                const Frame& f) const;

 private:
  ParamId wte_, bias_;  // bias_: kNoParam for the GPT
  int V_, C_;
  float label_smoothing_;
  // logits (n, V) = x·wteᵀ (+ bias), through the table's quantized copy in a quantized model.
  void project(float* logits, const float* x, int n, const Frame& f) const;
  // Rows of the chunks a pass takes (its rows when it keeps its logits whole).
  int chunk_rows(const LayerPass& pass, const int* targets) const;

  BufferId logits_, probs_, losses_;  // output: (N, V), (N, V) reused as d logits; kept: (N)
  BufferId dlosses_;                  // scratch: (N)
};

}  // namespace potop
