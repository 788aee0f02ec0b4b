// The input of a Transformer: out (N, C) = dropout(scale · wte[token] + position), where position
// is a learned table wpe (GPT-2), the paper's fixed sinusoids, or nothing (rotary positions are
// the attention's: a Llama's), and scale is 1 (GPT-2) or √C (the paper, whose table is shared with
// the output projection). Parameters: wte.weight (V, C), or a
// table another layer declared (an encoder-decoder's source and target sides share one), and
// wpe.weight (block_size, C) when learned. BERT's embeddings add two things (EmbeddingExtras): a
// segment table wtt.weight (token_types, C), whose row 0 is added at every position (potop's
// inputs are one segment, as Hugging Face's are when token_type_ids is not given), and a
// LayerNorm ln_e after the sum, before dropout:
//   out = dropout(LN_e(wte[token] + position + wtt[0]))
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/layernorm.h"
#include "nn/layer.h"
#include "nn/residual_stack.h"
#include "nn/transformer_config.h"

namespace potop {

struct EmbeddingExtras {
  int token_types = 0;  // rows of wtt; 0: no segment table
  bool norm = false;    // LN_e after the sum
  float eps = kLayerNormEps;
  bool bias = true;  // LN_e's
  bool dropout = true;  // on the output (a Llama has none there)
  // The tables' names (empty: <prefix>wte.weight, <prefix>wpe.weight).
  std::string token_name, position_name;
};

class EmbeddingLayer {
 public:
  EmbeddingLayer(LayerBuilder& b, const std::string& prefix, int vocab_size, int block_size, int n_embd,
                 PositionEncoding positions, const EmbeddingExtras& extras = {});
  // Reads the token table `shared_table` (V, C) declared elsewhere, scaled by `scale`.
  EmbeddingLayer(LayerBuilder& b, const std::string& prefix, ParamId shared_table, int block_size, int n_embd,
                 PositionEncoding positions, float scale);

  ParamId token_table() const { return wte_; }  // a tied LM head reads it too

  // Writes (N, C) into its kept buffer and returns it.
  const float* forward(const int* tokens, const LayerPass& pass, const Frame& f) const;
  // dout (N, C) is d of forward's output; scratch (N, C) may be overwritten.
  void backward(const float* dout, float* scratch, const int* tokens, const LayerPass& pass, const Frame& f) const;

 private:
  const float* sinusoid() const;
  const float* positions(const Frame& f) const;  // (block_size, C), or null

  void declare_rest(LayerBuilder& b, const std::string& prefix, int block_size, int n_embd,
                    PositionEncoding positions, const EmbeddingExtras& extras);

  int C_, block_size_;
  PositionEncoding positions_ = PositionEncoding::kLearned;
  float scale_ = 1.0f;
  ParamId wte_, wpe_ = kNoParam, wtt_ = kNoParam;
  std::unique_ptr<LayerNormParams> ln_;  // LN_e, when extras.norm
  float eps_ = kLayerNormEps;
  // (block_size, C) when positions are not learned: made by the first forward pass, so that
  // planning a model's memory allocates nothing.
  mutable std::once_flag sinusoid_once_;
  mutable std::vector<float> sinusoid_;
  int dropout_site_ = -1;  // none: no dropout
  BufferId out_;
  BufferId sum_, mean_, rstd_, d_sum_;  // LN_e's input, statistics and input gradient
};

}  // namespace potop
