#include "nn/transformer_body.h"

#include <cmath>
#include <string>

#include "nn/mlp_layer.h"

namespace potop {

TransformerBody::TransformerBody(LayerBuilder& b, const TransformerConfig& c, bool causal)
    : embed(b, "", c.vocab_size, c.block_size, c.n_embd, c.positions,
            EmbeddingExtras{c.token_types, c.embedding_norm, c.norm_eps, c.bias}),
      blocks(b, c.norm, c.n_embd, c.norm_eps) {
  // GPT-2 scales the init of the two projections into the residual stream by 1/√(2·n_layer).
  const double residual_std = 0.02 / std::sqrt(2.0 * c.n_layer);
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    const LayerNormParams ln1(b, h + "ln_1", c.n_embd, c.bias);
    auto attn = std::make_unique<AttentionLayer>(
        b, h + "attn", AttentionConfig{c.n_embd, c.n_head, c.bias, causal, /*cross=*/false, residual_std});
    attention.push_back(attn.get());
    blocks.add(b, ln1, std::move(attn));
    const LayerNormParams ln2(b, h + "ln_2", c.n_embd, c.bias);
    blocks.add(b, ln2,
               std::make_unique<MlpLayer>(b, h + "mlp",
                                          MlpConfig{c.n_embd, 4 * c.n_embd, c.activation, c.bias, residual_std}));
  }
  if (c.norm == NormPlacement::kPre) blocks.set_final_norm(b, LayerNormParams(b, "ln_f", c.n_embd, c.bias));
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
