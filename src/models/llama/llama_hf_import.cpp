#include "models/llama/llama_hf_import.h"

#include <string>

#include "models/llama/llama.h"
#include "models/llama/llama_tensors.h"

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
  return imported_decoder(std::make_unique<Llama>(c), to_json(c), llama_tensor_table(), ForeignFormat::kHuggingFace,
                          r.tensors, "LlamaForCausalLM");
}

}  // namespace potop
