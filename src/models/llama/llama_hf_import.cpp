#include "models/llama/llama_hf_import.h"

#include <string>

#include "models/llama/llama.h"

namespace potop {

namespace {

LlamaConfig llama_config(const ForeignConfig& f) {
  LlamaConfig c;
  c.vocab_size = f.integer("vocab_size");
  c.n_embd = f.integer("hidden_size");
  c.ffn_hidden = f.integer("intermediate_size");
  c.n_layer = f.integer("num_hidden_layers");
  c.n_head = f.integer("num_attention_heads");
  c.n_kv_head = f.integer("num_key_value_heads", c.n_head);
  c.block_size = f.integer("max_position_embeddings", 2048);  // LlamaConfig's default
  c.norm_eps = static_cast<float>(f.number("rms_norm_eps", 1e-6));
  c.rope_theta = static_cast<float>(f.number("rope_theta", 10000.0));
  c.tie_embeddings = f.boolean("tie_word_embeddings", false);  // LlamaConfig's default
  c.dropout = static_cast<float>(f.number("attention_dropout", 0.0));
  if (c.n_head > 0 && f.has("head_dim") && f.integer("head_dim") * c.n_head != c.n_embd)
    throw f.refuse("head_dim", "potop's Llama has heads of hidden_size / num_attention_heads");
  if (f.has("rope_scaling")) throw f.refuse("rope_scaling", "potop's Llama rotates by rope_theta alone");
  if (f.string("hidden_act", "silu") != "silu") throw f.refuse("hidden_act", "potop's Llama gates its MLP with SiLU");
  if (f.boolean("attention_bias", false)) throw f.refuse("attention_bias", "potop's Llama has no biases");
  if (f.boolean("mlp_bias", false)) throw f.refuse("mlp_bias", "potop's Llama has no biases");
  if (f.integer("pretraining_tp", 1) != 1) throw f.refuse("pretraining_tp", "potop reads unsplit matrices only");
  c.validate(f.file());
  return c.resolved();
}

}  // namespace

ImportedModel import_llama_hf(const ImportRequest& r) {
  const ForeignConfig f(r.config, r.config_file);
  const LlamaConfig c = llama_config(f);
  if (c.vocab_size != r.tokenizer.size())
    throw f.refuse("vocab_size", "the tokenizer beside it has " + std::to_string(r.tokenizer.size()) + " tokens");
  auto llama = std::make_unique<Llama>(c);
  ParameterFiller fill(llama->parameters(), r.tensors);
  const int64_t Q = int64_t{c.n_head} * c.head_size(), KV = int64_t{c.n_kv_head} * c.head_size();
  fill.same("model.embed_tokens.weight", "model.embed_tokens.weight");
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    fill.same(p + "input_layernorm.weight", p + "input_layernorm.weight");
    fill.linear_columns(p + "self_attn.qkv_proj.weight", p + "self_attn.q_proj.weight", 0);
    fill.linear_columns(p + "self_attn.qkv_proj.weight", p + "self_attn.k_proj.weight", Q);
    fill.linear_columns(p + "self_attn.qkv_proj.weight", p + "self_attn.v_proj.weight", Q + KV);
    fill.linear(p + "self_attn.o_proj.weight", p + "self_attn.o_proj.weight");
    fill.same(p + "post_attention_layernorm.weight", p + "post_attention_layernorm.weight");
    fill.linear_columns(p + "mlp.gate_up_proj.weight", p + "mlp.gate_proj.weight", 0);
    fill.linear_columns(p + "mlp.gate_up_proj.weight", p + "mlp.up_proj.weight", c.ffn_hidden);
    fill.linear(p + "mlp.down_proj.weight", p + "mlp.down_proj.weight");
    if (r.tensors.has(p + "self_attn.rotary_emb.inv_freq")) fill.ignore(p + "self_attn.rotary_emb.inv_freq");
  }
  fill.same("model.norm.weight", "model.norm.weight");
  if (!c.tie_embeddings) fill.same("lm_head.weight", "lm_head.weight");
  else if (r.tensors.has("lm_head.weight")) fill.equal("model.embed_tokens.weight", "lm_head.weight");
  fill.finish("LlamaForCausalLM");
  ImportedModel out;
  out.config = to_json(c);
  out.model = std::move(llama);
  return out;
}

}  // namespace potop
