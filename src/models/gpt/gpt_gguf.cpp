#include "models/gpt/gpt_gguf.h"

#include "core/error.h"
#include "export/gguf_tensors.h"
#include "export/gguf_vocab.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"

namespace potop {

namespace {

// The GPT's tensors by potop's names (GPT-2's), through the shared writer (export/gguf_tensors.h).
class Gpt2Tensors {
 public:
  Gpt2Tensors(const ParameterSet& params, GgufWriter& w, GgmlType weights, std::vector<std::string>& notes)
      : t_(params, w, weights, notes) {}

  // A 1-D tensor (a norm's gain or a bias) as f32; a missing one (no bias) as `fill`s.
  void vector(const std::string& gguf, const std::string& potop, int64_t n, float fill = 0.0f) {
    std::vector<float> v = t_.find(potop) == kNoParam ? std::vector<float>(static_cast<size_t>(n), fill)
                                                      : t_.values(potop, "the GPT");
    POTOP_CHECK(static_cast<int64_t>(v.size()) == n, potop + ": unexpected size");
    t_.vector(gguf, v);
  }
  // A (in, out) weight of potop as `out` rows of `in` in the weight type.
  void linear(const std::string& gguf, const std::string& potop) {
    const Shape& s = t_.shape(potop, "the GPT");
    t_.matrix(gguf, transposed(t_.values(potop, "the GPT"), s[0], s[1]), s[1], s[0]);
  }
  // A table of rows (embeddings), rows as they are.
  void table(const std::string& gguf, const std::string& potop, int64_t rows, int64_t cols, GgmlType type) {
    t_.matrix(gguf, t_.values(potop, "the GPT"), rows, cols, type);
  }
  void table(const std::string& gguf, const std::vector<float>& v, int64_t rows, int64_t cols, GgmlType type) {
    t_.matrix(gguf, v, rows, cols, type);
  }

 private:
  GgufTensors t_;
};

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
  const int64_t C = c.n_embd, V = c.vocab_size, T = c.block_size;

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

  const ParameterSet& params = model.parameters();
  Gpt2Tensors t(params, w, weights, notes);
  t.table("token_embd.weight", "wte.weight", V, C, weights);
  if (c.positions == PositionEncoding::kLearned) {
    t.table("position_embd.weight", "wpe.weight", T, C, GgmlType::kF32);
  } else {  // the fixed table the model adds, as a learned one
    std::vector<float> table(static_cast<size_t>(T * C));
    sinusoidal_positions(table.data(), static_cast<int>(T), static_cast<int>(C));
    t.table("position_embd.weight", table, T, C, GgmlType::kF32);
  }
  t.vector("output_norm.weight", "ln_f.weight", C, 1.0f);
  t.vector("output_norm.bias", "ln_f.bias", C);
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".", blk = "blk." + std::to_string(l) + ".";
    for (const Gpt2GgufPart& part : kGpt2GgufBlock) {
      const std::string from = h + part.potop, to = blk + part.gguf;
      if (part.linear) t.linear(to + ".weight", from + ".weight");
      else t.vector(to + ".weight", from + ".weight", C, 1.0f);
      t.vector(to + ".bias", from + ".bias", part.out_widths * C);
    }
  }
  return w;
}

}  // namespace potop
