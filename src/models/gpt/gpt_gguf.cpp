#include "models/gpt/gpt_gguf.h"

#include "core/error.h"
#include "export/gguf_tensors.h"
#include "export/gguf_vocab.h"
#include "models/gpt/gpt_tensors.h"

namespace potop {

namespace {

void check_architecture(const GPTConfig& c) {
  if (c.norm != NormPlacement::kPre)
    throw Error("config norm '" + to_string(c.norm) + "': llama.cpp's gpt2 is pre-LN; a post-LN model cannot be exported to GGUF");
  if (c.activation != Activation::kGelu)
    throw Error("config activation '" + to_string(c.activation) +
                "': llama.cpp's gpt2 uses GELU's tanh form (gelu); a " + to_string(c.activation) +
                " model cannot be exported to GGUF");
  if (c.token_types > 0 || c.embedding_norm)
    throw Error(std::string("config ") + (c.token_types > 0 ? "token_types" : "embedding_norm") +
                ": llama.cpp's gpt2 has no segment table and no LayerNorm on its embeddings (BERT's); this model "
                "cannot be exported to GGUF");
}

}  // namespace

GgufWriter gpt2_gguf(const GPT& model, const Tokenizer& tokenizer, GgmlType weights, const std::string& name,
                     std::vector<std::string>& notes) {
  const GPTConfig& c = model.config();
  check_architecture(c);
  if (tokenizer.size() != c.vocab_size)
    throw Error("the tokenizer has " + std::to_string(tokenizer.size()) + " tokens but the model's vocab_size is " +
                std::to_string(c.vocab_size));
  const int64_t C = c.n_embd, T = c.block_size;

  GgufWriter w;
  w.add_string("general.architecture", "gpt2");
  w.add_string("general.name", name);
  w.add_u32("general.file_type", gguf_file_type(weights));
  if (weights == GgmlType::kQ8_0 || weights == GgmlType::kQ4_0) w.add_u32("general.quantization_version", 2);
  w.add_u32("gpt2.context_length", static_cast<uint32_t>(T));
  w.add_u32("gpt2.embedding_length", static_cast<uint32_t>(C));
  w.add_u32("gpt2.feed_forward_length", static_cast<uint32_t>(4 * C));
  w.add_u32("gpt2.block_count", static_cast<uint32_t>(c.n_layer));
  w.add_u32("gpt2.attention.head_count", static_cast<uint32_t>(c.n_head));
  w.add_f32("gpt2.attention.layer_norm_epsilon", c.norm_eps);
  add_gguf_vocab(w, tokenizer, notes);

  GgufTensors t(model.parameters(), w, weights, notes);
  write_decoder_gguf_tensors(model, gpt2_tensor_table(), t, weights);
  return w;
}

}  // namespace potop
