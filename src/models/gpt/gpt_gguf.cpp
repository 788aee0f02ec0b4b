#include "models/gpt/gpt_gguf.h"

#include <cstring>

#include "core/error.h"
#include "export/gguf_vocab.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"
#include "kernels/quant.h"

namespace potop {

namespace {

ParamId param_id(const ParameterSet& params, const std::string& name) {
  const TensorSpec* spec = params.layout().find(name);
  return spec ? static_cast<ParamId>(spec - params.layout().specs().data()) : kNoParam;
}

// (rows, cols) row-major -> (cols, rows) row-major: potop's (in, out) weight as `out` rows of `in`.
std::vector<float> transposed(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<float> t(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[static_cast<size_t>(c * rows + r)] = x[static_cast<size_t>(r * cols + c)];
  return t;
}

// ggml's F32 meta: the file_type key (llama_ftype) for each weight type.
uint32_t file_type(GgmlType t) {
  switch (t) {
    case GgmlType::kF32: return 0;
    case GgmlType::kF16: return 1;
    case GgmlType::kQ4_0: return 2;
    case GgmlType::kQ8_0: return 7;
  }
  return 0;
}

class Gpt2Tensors {
 public:
  Gpt2Tensors(const ParameterSet& params, GgufWriter& w, GgmlType weights, std::vector<std::string>& notes)
      : params_(params), w_(w), weights_(weights), notes_(notes) {}

  // A 1-D tensor (a norm's gain or a bias) as f32; a missing one (no bias) as `fill`s.
  void vector(const std::string& gguf, const std::string& potop, int64_t n, float fill = 0.0f) {
    const ParamId id = param_id(params_, potop);
    std::vector<float> v = id == kNoParam ? std::vector<float>(static_cast<size_t>(n), fill) : params_.dense_values(id);
    POTOP_CHECK(static_cast<int64_t>(v.size()) == n, potop + ": unexpected size");
    add(gguf, v, n, 1, GgmlType::kF32, false);
  }
  // A (in, out) weight of potop as `out` rows of `in` in the weight type.
  void linear(const std::string& gguf, const std::string& potop) {
    const ParamId id = param_id(params_, potop);
    POTOP_CHECK(id != kNoParam, "the GPT has no " + potop);
    const Shape& s = params_.spec(id).shape;
    add(gguf, transposed(params_.dense_values(id), s[0], s[1]), s[0], s[1], weights_, true);
  }
  // A table of rows (embeddings), rows as they are.
  void table(const std::string& gguf, const std::vector<float>& v, int64_t rows, int64_t cols, GgmlType type) {
    add(gguf, v, cols, rows, type, true);
  }

 private:
  // rows × cols floats as a tensor of `type` (f16 when a row is not whole q8_0 blocks): a matrix
  // ne = {cols, rows}, or a vector ne = {cols}.
  void add(const std::string& name, const std::vector<float>& v, int64_t cols, int64_t rows, GgmlType type,
           bool matrix) {
    if (type == GgmlType::kQ8_0 && !quant_row_fits(QuantType::kQ8_0, static_cast<int>(cols))) {
      notes_.push_back(name + ": rows of " + std::to_string(cols) + " values are not whole q8_0 blocks of 32: f16");
      type = GgmlType::kF16;
    }
    const size_t row_bytes = ggml_row_bytes(type, cols);
    std::vector<uint8_t> bytes(row_bytes * static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = v.data() + r * cols;
      uint8_t* out = bytes.data() + static_cast<size_t>(r) * row_bytes;
      if (type == GgmlType::kF32) std::memcpy(out, row, row_bytes);
      else quantize_row(type == GgmlType::kF16 ? QuantType::kF16 : QuantType::kQ8_0, row, static_cast<int>(cols), out);
    }
    std::vector<uint64_t> ne{static_cast<uint64_t>(cols)};
    if (matrix) ne.push_back(static_cast<uint64_t>(rows));
    w_.add_tensor(name, std::move(ne), type, std::move(bytes));
  }

  const ParameterSet& params_;
  GgufWriter& w_;
  GgmlType weights_;
  std::vector<std::string>& notes_;
};

void check_architecture(const GPTConfig& c) {
  if (c.norm != NormPlacement::kPre)
    throw Error("config norm '" + to_string(c.norm) + "': llama.cpp's gpt2 is pre-LN; a post-LN model cannot be exported to GGUF");
  if (c.activation != Activation::kGelu)
    throw Error("config activation '" + to_string(c.activation) +
                "': llama.cpp's gpt2 uses GELU; a ReLU model cannot be exported to GGUF");
}

}  // namespace

GgufWriter gpt2_gguf(const GPT& model, const Tokenizer& tokenizer, GgmlType weights, const std::string& name,
                     std::vector<std::string>& notes) {
  POTOP_CHECK(weights == GgmlType::kF32 || weights == GgmlType::kF16 || weights == GgmlType::kQ8_0,
              "weights are f32, f16 or q8_0");
  const GPTConfig& c = model.config();
  check_architecture(c);
  if (tokenizer.size() != c.vocab_size)
    throw Error("the tokenizer has " + std::to_string(tokenizer.size()) + " tokens but the model's vocab_size is " +
                std::to_string(c.vocab_size));
  const int64_t C = c.n_embd, V = c.vocab_size, T = c.block_size;

  GgufWriter w;
  w.add_string("general.architecture", "gpt2");
  w.add_string("general.name", name);
  w.add_u32("general.file_type", file_type(weights));
  if (weights == GgmlType::kQ8_0) w.add_u32("general.quantization_version", 2);
  w.add_u32("gpt2.context_length", static_cast<uint32_t>(T));
  w.add_u32("gpt2.embedding_length", static_cast<uint32_t>(C));
  w.add_u32("gpt2.feed_forward_length", static_cast<uint32_t>(4 * C));
  w.add_u32("gpt2.block_count", static_cast<uint32_t>(c.n_layer));
  w.add_u32("gpt2.attention.head_count", static_cast<uint32_t>(c.n_head));
  w.add_f32("gpt2.attention.layer_norm_epsilon", kLayerNormEps);
  add_gguf_vocab(w, tokenizer, notes);

  const ParameterSet& params = model.parameters();
  Gpt2Tensors t(params, w, weights, notes);
  t.table("token_embd.weight", params.dense_values(param_id(params, "wte.weight")), V, C, weights);
  if (c.positions == PositionEncoding::kLearned) {
    t.table("position_embd.weight", params.dense_values(param_id(params, "wpe.weight")), T, C, GgmlType::kF32);
  } else {  // the fixed table the model adds, as a learned one
    std::vector<float> table(static_cast<size_t>(T * C));
    sinusoidal_positions(table.data(), static_cast<int>(T), static_cast<int>(C));
    t.table("position_embd.weight", table, T, C, GgmlType::kF32);
  }
  t.vector("output_norm.weight", "ln_f.weight", C, 1.0f);
  t.vector("output_norm.bias", "ln_f.bias", C);
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".", blk = "blk." + std::to_string(l) + ".";
    t.vector(blk + "attn_norm.weight", h + "ln_1.weight", C, 1.0f);
    t.vector(blk + "attn_norm.bias", h + "ln_1.bias", C);
    t.linear(blk + "attn_qkv.weight", h + "attn.c_attn.weight");
    t.vector(blk + "attn_qkv.bias", h + "attn.c_attn.bias", 3 * C);
    t.linear(blk + "attn_output.weight", h + "attn.c_proj.weight");
    t.vector(blk + "attn_output.bias", h + "attn.c_proj.bias", C);
    t.vector(blk + "ffn_norm.weight", h + "ln_2.weight", C, 1.0f);
    t.vector(blk + "ffn_norm.bias", h + "ln_2.bias", C);
    t.linear(blk + "ffn_up.weight", h + "mlp.c_fc.weight");
    t.vector(blk + "ffn_up.bias", h + "mlp.c_fc.bias", 4 * C);
    t.linear(blk + "ffn_down.weight", h + "mlp.c_proj.weight");
    t.vector(blk + "ffn_down.bias", h + "mlp.c_proj.bias", C);
  }
  return w;
}

}  // namespace potop
