// A potop Llama as a Hugging Face LlamaForCausalLM directory (see llama_hf_export.h).
#include "models/llama/llama_hf_export.h"

#include <nlohmann/json.hpp>
#include <string>

#include "core/decimal.h"
#include "core/error.h"
#include "core/file_io.h"

namespace potop {

namespace fs = std::filesystem;

namespace {

using ojson = nlohmann::ordered_json;

class LlamaTensors {
 public:
  explicit LlamaTensors(const ParameterSet& params) : params_(params) {}

  // potop's tensor `name` (of shape `shape`) as it is: vectors and embedding tables.
  void same(const std::string& hf, const std::string& name, const Shape& shape) {
    out_.push_back({hf, shape, values(name, shape)});
  }
  // Columns [c0, c1) of potop's (in, out) matrix `name` as nn.Linear's weight, (c1 - c0, in).
  void columns(const std::string& hf, const std::string& name, const Shape& shape, int64_t c0, int64_t c1) {
    const std::vector<float> w = values(name, shape);
    const int64_t in = shape[0], out = shape[1];
    POTOP_CHECK(0 <= c0 && c0 < c1 && c1 <= out, name + ": columns out of range");
    std::vector<float> t(static_cast<size_t>((c1 - c0) * in));
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t i = 0; i < in; ++i) t[static_cast<size_t>((c - c0) * in + i)] = w[static_cast<size_t>(i * out + c)];
    out_.push_back({hf, {c1 - c0, in}, std::move(t)});
  }
  // A whole (in, out) matrix as nn.Linear's (out, in).
  void linear(const std::string& hf, const std::string& name, const Shape& shape) {
    columns(hf, name, shape, 0, shape[1]);
  }

  std::vector<HfTensor> take() { return std::move(out_); }

 private:
  std::vector<float> values(const std::string& name, const Shape& shape) const {
    const TensorSpec* spec = params_.layout().find(name);
    POTOP_CHECK(spec, "the Llama has no " + name);
    POTOP_CHECK(spec->shape == shape, name + " is " + shape_string(spec->shape) + ", expected " + shape_string(shape));
    return params_.dense_values(static_cast<ParamId>(spec - params_.layout().specs().data()));
  }

  const ParameterSet& params_;
  std::vector<HfTensor> out_;
};

ojson config_json(const LlamaConfig& c, const Tokenizer& tokenizer) {
  ojson j;
  j["architectures"] = {"LlamaForCausalLM"};
  j["model_type"] = "llama";
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.n_embd;
  j["intermediate_size"] = c.ffn_hidden;
  j["num_hidden_layers"] = c.n_layer;
  j["num_attention_heads"] = c.n_head;
  j["num_key_value_heads"] = c.n_kv_head;
  j["head_dim"] = c.head_size();
  j["hidden_act"] = "silu";
  j["max_position_embeddings"] = c.block_size;
  j["initializer_range"] = 0.02;
  j["rms_norm_eps"] = as_written(c.norm_eps);
  j["rope_theta"] = as_written(c.rope_theta);
  j["rope_scaling"] = nullptr;
  j["attention_bias"] = false;
  j["attention_dropout"] = as_written(c.dropout);  // potop also drops sub-layer outputs; HF's Llama has no such dropout
  j["mlp_bias"] = false;
  j["pretraining_tp"] = 1;
  j["use_cache"] = true;
  add_special_ids(j, tokenizer);
  j["tie_word_embeddings"] = c.tie_embeddings;
  j["torch_dtype"] = "float32";
  j["potop"] = {{"model", ojson::parse(to_json(c).dump())}, {"tokenizer", tokenizer.kind()}};
  return j;
}

}  // namespace

std::vector<HfTensor> llama_hf_tensors(const Llama& model) {
  const LlamaConfig& c = model.config();
  const int64_t C = c.n_embd, V = c.vocab_size, F = c.ffn_hidden;
  const int64_t Q = int64_t{c.n_head} * c.head_size(), KV = int64_t{c.n_kv_head} * c.head_size();
  LlamaTensors t(model.parameters());
  t.same("model.embed_tokens.weight", "model.embed_tokens.weight", {V, C});
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const Shape qkv{C, Q + 2 * KV}, gate_up{C, 2 * F};
    t.same(p + "input_layernorm.weight", p + "input_layernorm.weight", {C});
    t.columns(p + "self_attn.q_proj.weight", p + "self_attn.qkv_proj.weight", qkv, 0, Q);
    t.columns(p + "self_attn.k_proj.weight", p + "self_attn.qkv_proj.weight", qkv, Q, Q + KV);
    t.columns(p + "self_attn.v_proj.weight", p + "self_attn.qkv_proj.weight", qkv, Q + KV, Q + 2 * KV);
    t.linear(p + "self_attn.o_proj.weight", p + "self_attn.o_proj.weight", {C, C});
    t.same(p + "post_attention_layernorm.weight", p + "post_attention_layernorm.weight", {C});
    t.columns(p + "mlp.gate_proj.weight", p + "mlp.gate_up_proj.weight", gate_up, 0, F);
    t.columns(p + "mlp.up_proj.weight", p + "mlp.gate_up_proj.weight", gate_up, F, 2 * F);
    t.linear(p + "mlp.down_proj.weight", p + "mlp.down_proj.weight", {F, C});
  }
  t.same("model.norm.weight", "model.norm.weight", {C});
  if (!c.tie_embeddings) t.same("lm_head.weight", "lm_head.weight", {V, C});
  return t.take();
}

void export_hf(const Llama& model, const Tokenizer& tokenizer, const fs::path& out_dir, const std::string& chat_template) {
  const LlamaConfig& c = model.config();
  check_hf_tokenizer(tokenizer);
  if (tokenizer.size() != c.vocab_size)
    throw Error("vocab_size: the model has " + std::to_string(c.vocab_size) + " tokens, its tokenizer " +
                std::to_string(tokenizer.size()));
  write_hf_directory(out_dir, [&](const fs::path& tmp) {
    write_hf_safetensors(tmp / "model.safetensors", llama_hf_tensors(model));
    write_file_atomic(tmp / "config.json", hf_json_text(config_json(c, tokenizer)));
    write_hf_generation_config(tokenizer, c.block_size, tmp);
    write_hf_tokenizer_files(tokenizer, c.block_size, tmp, chat_template);
  });
}

}  // namespace potop
