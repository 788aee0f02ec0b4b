#include "models/llama/llama_gguf_import.h"

#include <string>

#include "models/llama/llama.h"
#include "models/llama/llama_gguf.h"

namespace potop {

namespace {

LlamaConfig llama_gguf_config(const ForeignConfig& f, int vocab) {
  LlamaConfig c;
  c.vocab_size = f.integer("llama.vocab_size", vocab);
  c.block_size = f.integer("llama.context_length");
  c.n_embd = f.integer("llama.embedding_length");
  c.n_layer = f.integer("llama.block_count");
  c.ffn_hidden = f.integer("llama.feed_forward_length");
  c.n_head = f.integer("llama.attention.head_count");
  c.n_kv_head = f.integer("llama.attention.head_count_kv", c.n_head);
  c.norm_eps = static_cast<float>(f.number("llama.attention.layer_norm_rms_epsilon"));
  c.rope_theta = static_cast<float>(f.number("llama.rope.freq_base", 10000.0));
  c.dropout = 0.0f;
  if (c.n_head > 0 && f.has("llama.rope.dimension_count") &&
      f.integer("llama.rope.dimension_count") * c.n_head != c.n_embd)
    throw f.refuse("llama.rope.dimension_count", "potop's Llama rotates whole heads of embedding_length / head_count");
  if (f.has("llama.attention.key_length") && c.n_head > 0 && f.integer("llama.attention.key_length") * c.n_head != c.n_embd)
    throw f.refuse("llama.attention.key_length", "potop's Llama has heads of embedding_length / head_count");
  const std::string scaling = f.string("llama.rope.scaling.type", "none");
  if (scaling != "none") throw f.refuse("llama.rope.scaling.type", "potop's Llama rotates by rope.freq_base alone");
  if (f.has("llama.expert_count") && f.integer("llama.expert_count") > 0)
    throw f.refuse("llama.expert_count", "potop's Llama has one feed-forward block per layer, not experts");
  return c;
}

}  // namespace

ImportedModel import_llama_gguf(const ImportRequest& r) {
  const ForeignConfig f(r.config, r.config_file);
  LlamaConfig c = llama_gguf_config(f, r.tokenizer.size());
  if (c.vocab_size != r.tokenizer.size())
    throw f.refuse("llama.vocab_size", "the file's tokenizer has " + std::to_string(r.tokenizer.size()) + " tokens");
  if (r.tensors.has("rope_freqs.weight"))
    throw Error(r.config_file + ": tensor rope_freqs.weight scales the rotary frequencies (Llama 3.1's rope "
                "scaling); potop's Llama rotates by rope.freq_base alone");
  c.tie_embeddings = !r.tensors.has("output.weight");
  c = c.resolved();
  c.validate(f.file());
  auto llama = std::make_unique<Llama>(c);
  ParameterFiller fill(llama->parameters(), r.tensors);
  const int D = c.head_size();
  const int64_t Q = int64_t{c.n_head} * D, KV = int64_t{c.n_kv_head} * D;
  const std::vector<int64_t> q_rows = rope_rows_from_interleaved(c.n_head, D), k_rows = rope_rows_from_interleaved(c.n_kv_head, D);
  fill.same("model.embed_tokens.weight", "token_embd.weight");
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".", blk = "blk." + std::to_string(l) + ".";
    fill.same(p + "input_layernorm.weight", blk + "attn_norm.weight");
    fill.linear_columns(p + "self_attn.qkv_proj.weight", blk + "attn_q.weight", 0, q_rows);
    fill.linear_columns(p + "self_attn.qkv_proj.weight", blk + "attn_k.weight", Q, k_rows);
    fill.linear_columns(p + "self_attn.qkv_proj.weight", blk + "attn_v.weight", Q + KV);
    fill.linear(p + "self_attn.o_proj.weight", blk + "attn_output.weight");
    fill.same(p + "post_attention_layernorm.weight", blk + "ffn_norm.weight");
    fill.linear_columns(p + "mlp.gate_up_proj.weight", blk + "ffn_gate.weight", 0);
    fill.linear_columns(p + "mlp.gate_up_proj.weight", blk + "ffn_up.weight", c.ffn_hidden);
    fill.linear(p + "mlp.down_proj.weight", blk + "ffn_down.weight");
  }
  fill.same("model.norm.weight", "output_norm.weight");
  if (!c.tie_embeddings) fill.same("lm_head.weight", "output.weight");
  fill.finish("llama.cpp's llama");
  ImportedModel out;
  out.notes = fill.notes();
  out.config = to_json(c);
  out.model = std::move(llama);
  return out;
}

}  // namespace potop
