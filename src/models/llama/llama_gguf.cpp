#include "models/llama/llama_gguf.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "export/gguf_tensors.h"
#include "export/gguf_vocab.h"
#include "models/llama/llama_hf_export.h"

namespace potop {

namespace {

// Hugging Face's name -> llama.cpp's (convert_hf_to_gguf.py's table for LlamaForCausalLM).
std::string gguf_name(const std::string& hf) {
  static const std::pair<const char*, const char*> kLayer[] = {
      {"input_layernorm.weight", "attn_norm.weight"},   {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},     {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.o_proj.weight", "attn_output.weight"}, {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},       {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"},
  };
  if (hf == "model.embed_tokens.weight") return "token_embd.weight";
  if (hf == "model.norm.weight") return "output_norm.weight";
  if (hf == "lm_head.weight") return "output.weight";
  const std::string layers = "model.layers.";
  if (hf.starts_with(layers)) {
    const size_t dot = hf.find('.', layers.size());
    const std::string l = hf.substr(layers.size(), dot - layers.size()), rest = hf.substr(dot + 1);
    for (const auto& [from, to] : kLayer)
      if (rest == from) return "blk." + l + "." + to;
  }
  POTOP_CHECK(false, "no GGUF name for " + hf);
  return {};
}

}  // namespace

std::vector<float> interleave_rope_rows(const std::vector<float>& w, int heads, int D, int64_t in) {
  POTOP_CHECK(D % 2 == 0 && static_cast<int64_t>(w.size()) == int64_t{heads} * D * in,
              "interleave_rope_rows: not heads × D rows of `in` values, D even");
  std::vector<float> out(w.size());
  const int half = D / 2;
  for (int h = 0; h < heads; ++h)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < half; ++i) {
        const float* from = w.data() + (int64_t{h} * D + j * half + i) * in;
        std::copy(from, from + in, out.data() + (int64_t{h} * D + 2 * i + j) * in);
      }
  return out;
}

std::vector<int64_t> rope_rows_from_interleaved(int heads, int D) {
  POTOP_CHECK(D % 2 == 0, "rope_rows_from_interleaved: D even");
  std::vector<int64_t> order(static_cast<size_t>(heads) * D);
  const int half = D / 2;
  for (int h = 0; h < heads; ++h)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < half; ++i) order[size_t(h) * D + j * half + i] = int64_t{h} * D + 2 * i + j;
  return order;
}

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
  for (HfTensor& hf : llama_hf_tensors(model)) {
    const std::string gguf = gguf_name(hf.name);
    if (hf.shape.size() == 1) {
      t.vector(gguf, hf.values);
      continue;
    }
    const int64_t rows = hf.shape[0], cols = hf.shape[1];
    if (hf.name.ends_with("self_attn.q_proj.weight"))
      hf.values = interleave_rope_rows(hf.values, c.n_head, D, cols);
    else if (hf.name.ends_with("self_attn.k_proj.weight"))
      hf.values = interleave_rope_rows(hf.values, c.n_kv_head, D, cols);
    t.matrix(gguf, hf.values, rows, cols);
  }
  return w;
}

}  // namespace potop
