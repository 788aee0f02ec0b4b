#include "nn/transformer_body.h"

#include <cmath>
#include <string>

#include "nn/mlp_layer.h"

namespace potop {

TransformerBody::TransformerBody(LayerBuilder& b, const BodyConfig& c)
    : embed(b, "", c.vocab_size, c.block_size, c.n_embd, c.positions,
            EmbeddingExtras{c.token_types, c.embedding_norm, c.norm_eps, c.bias, c.embedding_dropout,
                            c.names.token_table, c.names.position_table}),
      blocks(b, c.norm, c.n_embd, c.norm_eps, c.norm_kind) {
  const BodyNames& n = c.names;
  const bool norm_bias = c.bias && c.norm_kind == NormKind::kLayerNorm;
  // GPT-2 scales the init of the two projections into the residual stream by 1/√(2·n_layer).
  const double residual_std = 0.02 / std::sqrt(2.0 * c.n_layer);
  AttentionConfig attention_config{c.n_embd, c.n_head, c.bias, c.causal, /*cross=*/false, residual_std};
  attention_config.n_kv_head = c.kv_heads();
  if (c.positions == PositionEncoding::kRotary) attention_config.rope_theta = c.rope_theta;
  attention_config.qkv_name = n.qkv, attention_config.proj_name = n.attention_out;
  MlpConfig mlp_config{c.n_embd, c.mlp_hidden(), c.activation, c.bias, residual_std};
  mlp_config.in_name = n.mlp_in, mlp_config.out_name = n.mlp_out;
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = n.block + std::to_string(l) + ".";
    const LayerNormParams ln1(b, h + n.attention_norm, c.n_embd, norm_bias);
    auto attn = std::make_unique<AttentionLayer>(b, h + n.attention, attention_config);
    attention.push_back(attn.get());
    blocks.add(b, ln1, std::move(attn));
    const LayerNormParams ln2(b, h + n.mlp_norm, c.n_embd, norm_bias);
    blocks.add(b, ln2, std::make_unique<MlpLayer>(b, h + n.mlp, mlp_config));
  }
  if (c.norm == NormPlacement::kPre) blocks.set_final_norm(b, LayerNormParams(b, n.final_norm, c.n_embd, norm_bias));
}

TransformerBody::Output TransformerBody::forward(const int* tokens, const LayerPass& pass, const Frame& f) const {
  const float* x = embed.forward(tokens, pass, f);  // x = dropout(wte[tokens] + positions)
  return {x, blocks.forward(x, pass, f)};           // h = blocks(x)
}

void TransformerBody::backward(const int* tokens, const float* x, const LayerPass& pass, const Frame& f) const {
  const ResidualStack::InputGrad d = blocks.backward(x, pass, f);  // h = blocks(x), into d x
  embed.backward(d.dx, d.free, tokens, pass, f);                   // x = dropout(wte[tokens] + positions)
}

}  // namespace potop
