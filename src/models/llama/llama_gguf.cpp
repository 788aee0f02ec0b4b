#include "models/llama/llama_gguf.h"

#include "core/error.h"
#include "export/gguf_tensors.h"
#include "export/gguf_vocab.h"
#include "models/llama/llama_tensors.h"

namespace potop {

GgufWriter llama_gguf(const Llama& model, const Tokenizer& tokenizer, GgmlType weights, const std::string& name,
                      std::vector<std::string>& notes) {
  const LlamaConfig& c = model.config();
  if (tokenizer.size() != c.vocab_size)
    throw Error("the tokenizer has " + std::to_string(tokenizer.size()) + " tokens but the model's vocab_size is " +
                std::to_string(c.vocab_size));
  const int D = c.head_size();

  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("general.name", name);
  w.add_u32("general.file_type", gguf_file_type(weights));
  if (weights == GgmlType::kQ8_0 || weights == GgmlType::kQ4_0) w.add_u32("general.quantization_version", 2);
  w.add_u32("llama.vocab_size", static_cast<uint32_t>(c.vocab_size));
  w.add_u32("llama.context_length", static_cast<uint32_t>(c.block_size));
  w.add_u32("llama.embedding_length", static_cast<uint32_t>(c.n_embd));
  w.add_u32("llama.block_count", static_cast<uint32_t>(c.n_layer));
  w.add_u32("llama.feed_forward_length", static_cast<uint32_t>(c.ffn_hidden));
  w.add_u32("llama.attention.head_count", static_cast<uint32_t>(c.n_head));
  w.add_u32("llama.attention.head_count_kv", static_cast<uint32_t>(c.n_kv_head));
  w.add_u32("llama.rope.dimension_count", static_cast<uint32_t>(D));
  w.add_f32("llama.rope.freq_base", c.rope_theta);
  w.add_f32("llama.attention.layer_norm_rms_epsilon", c.norm_eps);
  add_gguf_vocab(w, tokenizer, notes);

  GgufTensors t(model.parameters(), w, weights, notes);
  write_decoder_gguf_tensors(model, llama_tensor_table(), t, weights);
  return w;
}

}  // namespace potop
