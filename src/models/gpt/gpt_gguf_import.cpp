#include "models/gpt/gpt_gguf_import.h"

#include <string>

#include "kernels/layernorm.h"
#include "models/gpt/gpt.h"
#include "models/gpt/gpt_tensors.h"

namespace potop {

namespace {

GPTConfig gpt2_gguf_config(const ForeignConfig& f) {
  GPTConfig c;
  c.block_size = f.integer("gpt2.context_length");
  c.n_embd = f.integer("gpt2.embedding_length");
  c.n_layer = f.integer("gpt2.block_count");
  c.n_head = f.integer("gpt2.attention.head_count");
  c.bias = true;
  c.norm = NormPlacement::kPre;
  c.activation = Activation::kGelu;
  c.positions = PositionEncoding::kLearned;
  c.dropout = 0.0f;
  if (f.has("gpt2.feed_forward_length") && c.n_embd > 0 && f.integer("gpt2.feed_forward_length") != 4 * c.n_embd)
    throw f.refuse("gpt2.feed_forward_length", "potop's GPT has an MLP of 4 · embedding_length");
  c.norm_eps = static_cast<float>(f.number("gpt2.attention.layer_norm_epsilon", kLayerNormEps));
  return c;
}

}  // namespace

ImportedModel import_gpt2_gguf(const ImportRequest& r) {
  const ForeignConfig f(r.config, r.config_file);
  GPTConfig c = gpt2_gguf_config(f);
  c.vocab_size = r.tokenizer.size();
  c.validate(f.file());
  return imported_decoder(std::make_unique<GPT>(c), to_json(c), gpt2_tensor_table(), ForeignFormat::kGguf, r.tensors,
                          "llama.cpp's gpt2");
}

}  // namespace potop
