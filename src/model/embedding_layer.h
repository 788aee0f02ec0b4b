// The input of a Transformer: out (N, C) = dropout(wte[token] + position), where position is a
// learned table wpe (GPT-2) or the paper's fixed sinusoids. Parameters: wte.weight (V, C), and
// wpe.weight (block_size, C) when learned.
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/layer.h"

namespace potop {

class EmbeddingLayer {
 public:
  EmbeddingLayer(LayerBuilder& b, const std::string& prefix, int vocab_size, int block_size, int n_embd,
                 PositionEncoding positions);

  ParamId token_table() const { return wte_; }  // a tied LM head reads it too

  // Writes (N, C) into its kept buffer and returns it.
  const float* forward(const int* tokens, const LayerPass& pass, const Frame& f) const;
  // dout (N, C) is d of forward's output; scratch (N, C) may be overwritten.
  void backward(const float* dout, float* scratch, const int* tokens, const LayerPass& pass, const Frame& f) const;

 private:
  const float* sinusoid() const;

  int C_, block_size_;
  ParamId wte_, wpe_ = kNoParam;
  // (block_size, C) when positions are not learned: made by the first forward pass, so that
  // planning a model's memory allocates nothing.
  mutable std::once_flag sinusoid_once_;
  mutable std::vector<float> sinusoid_;
  int dropout_site_;
  BufferId out_;
};

}  // namespace potop
