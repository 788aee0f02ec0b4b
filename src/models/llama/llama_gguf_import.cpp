#include "models/llama/llama_gguf_import.h"

#include <string>

#include "core/error.h"

#include "models/llama/llama.h"
#include "models/llama/llama_tensors.h"

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
  c.tie_embeddings = !r.tensors.has(foreign_name(llama_tensor_table(), DecoderPart::kLmHead, ForeignFormat::kGguf));
  c = c.resolved();
  c.validate(f.file());
  return imported_decoder(std::make_unique<Llama>(c), to_json(c), llama_tensor_table(), ForeignFormat::kGguf, r.tensors,
                          "llama.cpp's llama");
}

}  // namespace potop
