// The body of a Transformer, which every decoder (models/decoder: the GPT's, the Llama's), BERT
// and the text classifier share, built from its switches (nn/body_config.h):
//
//   x = dropout(wte[tokens] + positions)                  EmbeddingLayer (BERT's: + wtt[0], LN_e;
//                                                           rotary positions: none here)
//   h = blocks(x): per block, Add & Norm around           ResidualStack (LayerNorm or RMSNorm) of
//         multi-head self-attention — causal (a decoder)    AttentionLayer (grouped K/V heads,
//         or bidirectional (BERT), padding masked —         RoPE on Q and K when rotary)
//         then the feed-forward MLP                         MlpLayer (GELU, ReLU or SwiGLU)
//       (pre-norm ends with a final norm)
//
// Parameter names are the architecture's (BodyNames): GPT-2's (wte, wpe, h.<l>.{ln_1, attn, ln_2,
// mlp}, ln_f) in the GPT, BERT and the classifier, so weights move between them by name (a
// classifier starts from a GPT's or a BERT's body); Hugging Face Llama's in a Llama.
#pragma once
#include <memory>
#include <vector>

#include "nn/attention_layer.h"
#include "nn/body_config.h"
#include "nn/embedding_layer.h"
#include "nn/layer.h"
#include "nn/residual_stack.h"

namespace potop {

struct TransformerBody {
  // Declares the body's parameters in checkpoint order (wte, wpe, the blocks, ln_f) and its
  // activations in b.acts. GPT-2's init: N(0, 0.02), the projections into the residual stream
  // N(0, 0.02/√(2·n_layer)).
  TransformerBody(LayerBuilder& b, const BodyConfig& c);
  TransformerBody(LayerBuilder& b, const TransformerConfig& c, bool causal) : TransformerBody(b, gpt2_body(c, causal)) {}

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
