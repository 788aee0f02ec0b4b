#include "models/llama/llama_config.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace potop {

namespace {

std::vector<Field> all_fields(LlamaConfig& c) {
  std::vector<Field> fields{{"vocab-size", "tokens in the vocabulary", &c.vocab_size, true}};
  for (Field& f : llama_fields(c)) fields.push_back(std::move(f));
  return fields;
}

}  // namespace

std::vector<Field> llama_fields(LlamaConfig& c) {
  return {
      {"n-layer", "number of Transformer blocks", &c.n_layer, true},
      {"n-head", "attention (query) heads per block", &c.n_head, true},
      {"n-kv-head", "--arch llama: key/value heads, shared by groups of query heads: 1 (multi-query) to n-head "
                    "(multi-head, the default)", &c.n_kv_head, true},
      {"n-embd", "embedding width C (divisible by n-head)", &c.n_embd, true},
      {"ffn-hidden", "--arch llama: the SwiGLU feed-forward's hidden size; default 8/3 · n-embd rounded up to a "
                     "multiple of 32", &c.ffn_hidden, true},
      {"block-size", "context length T in tokens", &c.block_size, true},
      {"rope-theta", "--arch llama: the base θ of the rotary position embedding", &c.rope_theta, false},
      {"norm-eps", "--arch llama: the epsilon of RMSNorm", &c.norm_eps, false},
      {"tie-embeddings", "--arch llama: the output head reads the token embedding (false: a head of its own)",
       &c.tie_embeddings, true},
      {"dropout", "dropout probability in [0, 1)", &c.dropout, false},
  };
}

BodyConfig llama_body(const LlamaConfig& c) {
  c.validate("llama config");
  BodyConfig b;
  b.vocab_size = c.vocab_size, b.block_size = c.block_size, b.n_layer = c.n_layer, b.n_head = c.n_head;
  b.n_kv_head = c.n_kv_head, b.n_embd = c.n_embd, b.ffn_hidden = c.ffn_hidden;
  b.norm_kind = NormKind::kRms, b.norm = NormPlacement::kPre, b.norm_eps = c.norm_eps;
  b.activation = Activation::kSwiGlu;
  b.positions = PositionEncoding::kRotary, b.rope_theta = c.rope_theta;
  b.bias = false;
  b.dropout = c.dropout, b.embedding_dropout = false;
  b.tie_embeddings = c.tie_embeddings;
  b.names = BodyNames{.token_table = "model.embed_tokens.weight",
                      .position_table = "",
                      .block = "model.layers.",
                      .attention_norm = "input_layernorm",
                      .attention = "self_attn",
                      .qkv = "qkv_proj",
                      .attention_out = "o_proj",
                      .mlp_norm = "post_attention_layernorm",
                      .mlp = "mlp",
                      .mlp_in = "gate_up_proj",
                      .mlp_out = "down_proj",
                      .final_norm = "model.norm",
                      .lm_head = "lm_head.weight"};
  return b;
}

int default_ffn_hidden(int n_embd) { return (8 * n_embd / 3 + 31) / 32 * 32; }

LlamaConfig LlamaConfig::resolved() const {
  LlamaConfig c = *this;
  if (c.n_kv_head == 0) c.n_kv_head = c.n_head;
  if (c.ffn_hidden == 0) c.ffn_hidden = default_ffn_hidden(c.n_embd);
  return c;
}

void LlamaConfig::validate(const std::string& source) const {
  // A field as the message names it: the config's key, or (no source) the flag.
  auto named = [&](const std::string& field) {
    if (!source.empty()) return field;
    std::string flag = "--" + field;
    for (char& c : flag) c = c == '_' ? '-' : c;
    return flag;
  };
  auto require = [&](bool ok, const std::string& field, const std::string& what) {
    if (!ok) throw Error((source.empty() ? "" : source + ": ") + named(field) + " " + what);
  };
  auto positive = [&](int v, const char* field, int max) {
    require(v > 0, field, "must be positive (got " + std::to_string(v) + ")");
    require(v <= max, field, "is too large (max " + std::to_string(max) + ")");
  };
  positive(vocab_size, "vocab_size", 1 << 24);
  positive(block_size, "block_size", 65536);
  positive(n_layer, "n_layer", 1024);
  positive(n_head, "n_head", 4096);
  positive(n_kv_head, "n_kv_head", 4096);
  positive(n_embd, "n_embd", 65536);
  positive(ffn_hidden, "ffn_hidden", 1 << 20);
  // std::string(…).append, not "(" + …: GCC 12's -Wrestrict misfires on the latter
  auto in_parens = [](int v) { return std::string("(").append(std::to_string(v)).append(")"); };
  require(n_embd % n_head == 0, "n_embd",
          in_parens(n_embd).append(" must be divisible by ").append(named("n_head")).append(" ").append(in_parens(n_head)));
  require(head_size() % 2 == 0, "n_embd",
          std::string("/ ").append(named("n_head")).append(" ").append(in_parens(head_size())).append(
              " must be even: rotary embeddings turn pairs of a head's values"));
  require(n_head % n_kv_head == 0, "n_head",
          in_parens(n_head).append(" must be a multiple of ").append(named("n_kv_head")).append(" ").append(
              in_parens(n_kv_head)));
  require(std::isfinite(rope_theta) && rope_theta > 1.0f, "rope_theta",
          "must be greater than 1 (got " + std::to_string(rope_theta) + ")");
  require(std::isfinite(norm_eps) && norm_eps > 0.0f && norm_eps < 1.0f, "norm_eps",
          "must be in (0, 1) (got " + std::to_string(norm_eps) + ")");
  require(std::isfinite(dropout) && dropout >= 0.0f && dropout < 1.0f, "dropout",
          "must be in [0, 1) (got " + std::to_string(dropout) + ")");
}

nlohmann::json to_json(const LlamaConfig& config) {
  LlamaConfig copy = config;
  return fields_to_json(all_fields(copy));
}

void update_from_json(LlamaConfig& config, const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source + ": expected a JSON object with the model config");
  apply_json(all_fields(config), j, source, "model field");
  config = config.resolved();  // a config without n_kv_head or ffn_hidden (or 0) means their defaults
}

}  // namespace potop
