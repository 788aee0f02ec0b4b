// The shape of a Transformer body (nn/transformer_body.h) as switches, one struct for every body
// potop builds: a GPT-2's, a Llama's, a BERT's, a classifier's. A model kind's config (what its
// config.json and flags hold: nn/transformer_config.h, models/llama/llama_config.h) maps onto it,
// with the architecture's tensor names (BodyNames), so that one decoder (models/decoder) and one
// body serve every architecture: a new one is a mapping, its names and the switches it needs.
#pragma once
#include <string>

#include "nn/transformer_config.h"

namespace potop {

// The names of a body's tensors in potop's checkpoints (Hugging Face's where the architecture
// has them; the defaults are GPT-2's). Block l's tensors are "<block><l>.<sub-layer>...".
struct BodyNames {
  std::string token_table = "wte.weight", position_table = "wpe.weight";
  std::string block = "h.";
  std::string attention_norm = "ln_1", attention = "attn", qkv = "c_attn", attention_out = "c_proj";
  std::string mlp_norm = "ln_2", mlp = "mlp", mlp_in = "c_fc", mlp_out = "c_proj";
  std::string final_norm = "ln_f";  // pre-norm bodies end with it
  std::string lm_head = "lm_head.weight";  // an untied decoder's output table
};

struct BodyConfig {
  int vocab_size = 0, block_size = 0, n_layer = 0, n_head = 0, n_embd = 0;
  int n_kv_head = 0;   // key/value heads (0: n_head)
  int ffn_hidden = 0;  // the MLP's width (0: 4 · n_embd)
  NormKind norm_kind = NormKind::kLayerNorm;
  NormPlacement norm = NormPlacement::kPre;
  float norm_eps = 1e-5f;
  Activation activation = Activation::kGelu;
  PositionEncoding positions = PositionEncoding::kLearned;
  float rope_theta = 10000.0f;  // rotary positions'
  bool bias = true;             // in every projection and LayerNorm
  bool causal = true;           // look-ahead mask (a decoder's); BERT's is bidirectional
  float dropout = 0.0f;
  bool embedding_dropout = true;  // dropout on the embedding's output too (GPT-2's; not a Llama's)
  // BERT's embedding extras (nn/embedding_layer.h).
  int token_types = 0;
  bool embedding_norm = false;
  bool tie_embeddings = true;  // a decoder's output head reads the token table
  BodyNames names;

  int kv_heads() const { return n_kv_head > 0 ? n_kv_head : n_head; }
  int head_size() const { return n_embd / n_head; }
  int mlp_hidden() const { return ffn_hidden > 0 ? ffn_hidden : 4 * n_embd; }
};

// GPT-2's body (and BERT's and a classifier's: the same layers and names) of a TransformerConfig.
BodyConfig gpt2_body(const TransformerConfig& c, bool causal);

}  // namespace potop
