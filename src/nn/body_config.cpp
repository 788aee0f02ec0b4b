#include "nn/body_config.h"

namespace potop {

BodyConfig gpt2_body(const TransformerConfig& c, bool causal) {
  BodyConfig b;
  b.vocab_size = c.vocab_size, b.block_size = c.block_size, b.n_layer = c.n_layer, b.n_head = c.n_head;
  b.n_embd = c.n_embd;
  b.norm = c.norm, b.norm_eps = c.norm_eps;
  b.activation = c.activation, b.positions = c.positions, b.bias = c.bias, b.causal = causal;
  b.dropout = c.dropout;
  b.token_types = c.token_types, b.embedding_norm = c.embedding_norm;
  return b;
}

}  // namespace potop
