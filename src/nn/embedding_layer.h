// The input of a Transformer: out (N, C) = dropout(scale · wte[token] + position), where position
// is a learned table wpe (GPT-2) or the paper's fixed sinusoids, and scale is 1 (GPT-2) or √C (the
// paper, whose table is shared with the output projection). Parameters: wte.weight (V, C), or a
// table another layer declared (an encoder-decoder's source and target sides share one), and
// wpe.weight (block_size, C) when learned.
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "nn/transformer_config.h"
#include "nn/layer.h"

namespace potop {

class EmbeddingLayer {
 public:
  EmbeddingLayer(LayerBuilder& b, const std::string& prefix, int vocab_size, int block_size, int n_embd,
                 PositionEncoding positions);
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

  void declare_rest(LayerBuilder& b, const std::string& prefix, int block_size, int n_embd,
                    PositionEncoding positions);

  int C_, block_size_;
  float scale_ = 1.0f;
  ParamId wte_, wpe_ = kNoParam;
  // (block_size, C) when positions are not learned: made by the first forward pass, so that
  // planning a model's memory allocates nothing.
  mutable std::once_flag sinusoid_once_;
  mutable std::vector<float> sinusoid_;
  int dropout_site_;
  BufferId out_;
};

}  // namespace potop
