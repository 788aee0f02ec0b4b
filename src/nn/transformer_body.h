// The body of a GPT-2-shaped Transformer, which the GPT, BERT and the text classifier share:
//
//   x = dropout(wte[tokens] + positions)                  EmbeddingLayer (BERT's: + wtt[0], LN_e)
//   h = blocks(x): per block, Add & Norm around           ResidualStack of
//         multi-head self-attention — causal (the GPT)      AttentionLayer
//         or bidirectional (BERT), padding masked —
//         then the feed-forward MLP                         MlpLayer
//       (pre-LN ends with ln_f)
//
// Parameter names are GPT-2's (wte, wpe, h.<l>.{ln_1, attn, ln_2, mlp}, ln_f) in every model built
// on it, so weights move between them by name: a classifier starts from a GPT's or a BERT's body.
#pragma once
#include <memory>
#include <vector>

#include "nn/transformer_config.h"
#include "nn/attention_layer.h"
#include "nn/embedding_layer.h"
#include "nn/layer.h"
#include "nn/residual_stack.h"

namespace potop {

struct TransformerBody {
  // Declares the body's parameters in checkpoint order (wte, wpe, the blocks, ln_f) and its
  // activations in b.acts. GPT-2's init: N(0, 0.02), the projections into the residual stream
  // N(0, 0.02/√(2·n_layer)).
  TransformerBody(LayerBuilder& b, const TransformerConfig& c, bool causal);

  EmbeddingLayer embed;
  ResidualStack blocks;
  std::vector<const AttentionLayer*> attention;  // block l's self-attention, for pictures

  struct Output {
    const float* x;  // the embedding's output, which backward reads
    const float* h;  // the blocks' output (N, C)
  };
  // h = blocks(embed(tokens)); pass.lengths masks the padding of bidirectional attention.
  Output forward(const int* tokens, const LayerPass& pass, const Frame& f) const;
  // After the caller has written d h into blocks.output_grad(f): the gradients of every
  // parameter of the body, from the x forward returned.
  void backward(const int* tokens, const float* x, const LayerPass& pass, const Frame& f) const;
};

}  // namespace potop
