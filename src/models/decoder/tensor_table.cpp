#include "models/decoder/tensor_table.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "kernels/embedding.h"

namespace potop {

namespace {

bool in_block(DecoderPart p) { return p != DecoderPart::kTokenTable && p != DecoderPart::kPositionTable &&
                                      p != DecoderPart::kFinalNorm && p != DecoderPart::kLmHead; }
bool is_table(DecoderPart p) {
  return p == DecoderPart::kTokenTable || p == DecoderPart::kPositionTable || p == DecoderPart::kLmHead;
}
bool is_matrix(const TensorName& n) {
  return !n.bias && (n.part == DecoderPart::kQkv || n.part == DecoderPart::kAttentionOut ||
                     n.part == DecoderPart::kMlpIn || n.part == DecoderPart::kMlpOut);
}
bool rotated(const TensorName& n, const BodyConfig& c) {
  return c.positions == PositionEncoding::kRotary && (n.columns == Columns::kQ || n.columns == Columns::kK);
}

// potop's name of the part (nn/body_config.h's names).
std::string potop_name(const BodyConfig& c, const TensorName& t, int l) {
  const BodyNames& n = c.names;
  const std::string what = t.bias ? ".bias" : ".weight", block = n.block + std::to_string(l) + ".";
  switch (t.part) {
    case DecoderPart::kTokenTable: return n.token_table;
    case DecoderPart::kPositionTable: return n.position_table;
    case DecoderPart::kAttentionNorm: return block + n.attention_norm + what;
    case DecoderPart::kQkv: return block + n.attention + "." + n.qkv + what;
    case DecoderPart::kAttentionOut: return block + n.attention + "." + n.attention_out + what;
    case DecoderPart::kMlpNorm: return block + n.mlp_norm + what;
    case DecoderPart::kMlpIn: return block + n.mlp + "." + n.mlp_in + what;
    case DecoderPart::kMlpOut: return block + n.mlp + "." + n.mlp_out + what;
    case DecoderPart::kFinalNorm: return n.final_norm + what;
    case DecoderPart::kLmHead: return n.lm_head;
  }
  return {};
}

std::string with_layer(const std::string& name, int l) {
  const size_t at = name.find("{l}");
  return at == std::string::npos ? name : name.substr(0, at) + std::to_string(l) + name.substr(at + 3);
}

// Columns [first, second) of the block within a fused matrix of `out` columns.
std::pair<int64_t, int64_t> column_range(const BodyConfig& c, Columns k, int64_t out) {
  const int64_t Q = int64_t{c.n_head} * c.head_size(), KV = int64_t{c.kv_heads()} * c.head_size(), F = c.mlp_hidden();
  switch (k) {
    case Columns::kAll: return {0, out};
    case Columns::kQ: return {0, Q};
    case Columns::kK: return {Q, Q + KV};
    case Columns::kV: return {Q + KV, Q + 2 * KV};
    case Columns::kGate: return {0, F};
    case Columns::kUp: return {F, 2 * F};
  }
  return {0, out};
}

// The (rows, name) pairs of the table in writing order: blocks between the tables and the final
// norm, or after them all.
template <class Visit>
void each_name(const TensorTable& table, const BodyConfig& c, bool globals_first, Visit visit) {
  const auto first_block = std::find_if(table.names.begin(), table.names.end(),
                                        [](const TensorName& n) { return in_block(n.part); });
  auto globals = [&](bool before) {
    for (auto it = table.names.begin(); it != table.names.end(); ++it)
      if (!in_block(it->part) && (globals_first || (it < first_block) == before)) visit(*it, 0);
  };
  globals(true);
  for (int l = 0; l < c.n_layer; ++l)
    for (const TensorName& n : table.names)
      if (in_block(n.part)) visit(n, l);
  if (!globals_first) globals(false);
}

// The part's values as potop keeps them, and its shape: a bias potop lacks is zeros as long as the
// weight's output; a column block is cut out.
std::pair<std::vector<float>, Shape> potop_values(const CausalDecoder& m, const TensorName& n, int l) {
  const BodyConfig& c = m.shape();
  const ParameterSet& params = m.parameters();
  const std::string name = potop_name(c, n, l);
  const TensorSpec* spec = params.layout().find(name);
  std::vector<float> v;
  Shape shape;
  if (spec) {
    v = params.dense_values(static_cast<ParamId>(spec - params.layout().specs().data()));
    shape = spec->shape;
  } else {
    POTOP_CHECK(n.bias, "the model has no " + name);
    TensorName weight = n;
    weight.bias = false;
    const TensorSpec* w = params.layout().find(potop_name(c, weight, l));
    POTOP_CHECK(w, "the model has no " + potop_name(c, weight, l));
    shape = {w->shape.back()};
    v.assign(static_cast<size_t>(shape[0]), 0.0f);
  }
  if (n.columns == Columns::kAll) return {std::move(v), shape};
  const int64_t out = shape.back(), in = shape.size() == 2 ? shape[0] : 1;
  const auto [c0, c1] = column_range(c, n.columns, out);
  POTOP_CHECK(0 <= c0 && c0 < c1 && c1 <= out, name + ": columns out of range");
  std::vector<float> block(static_cast<size_t>((c1 - c0) * in));
  for (int64_t i = 0; i < in; ++i)
    std::copy(v.begin() + i * out + c0, v.begin() + i * out + c1, block.begin() + i * (c1 - c0));
  return {std::move(block), shape.size() == 2 ? Shape{in, c1 - c0} : Shape{c1 - c0}};
}

// Whether the decoder has the part at all: a tied head and rotary positions are not tensors.
bool written(const BodyConfig& c, DecoderPart p) {
  return !(p == DecoderPart::kLmHead && c.tie_embeddings) &&
         !(p == DecoderPart::kPositionTable && c.positions == PositionEncoding::kRotary);
}

// The position table: learned, or the fixed sinusoids as the table they are.
std::vector<float> position_table(const CausalDecoder& m, const TensorName& n) {
  const BodyConfig& c = m.shape();
  if (c.positions == PositionEncoding::kLearned) return potop_values(m, n, 0).first;
  std::vector<float> table(static_cast<size_t>(c.block_size) * c.n_embd);
  sinusoidal_positions(table.data(), c.block_size, c.n_embd);
  return table;
}

}  // namespace

void fill_decoder(ParameterFiller& fill, const TensorTable& table, const BodyConfig& c, ForeignFormat format,
                  const ForeignTensors& tensors) {
  const bool hf = format == ForeignFormat::kHuggingFace;
  const std::string& prefix = table.hf_optional_prefix;
  bool strip = false;
  for (const TensorName& n : table.names)
    if (n.part == DecoderPart::kTokenTable && hf && !prefix.empty())
      strip = !tensors.has(n.hf) && std::string(n.hf).starts_with(prefix);
  auto foreign = [&](const std::string& name, int l) {
    const std::string s = with_layer(name, l);
    return strip && s.starts_with(prefix) ? s.substr(prefix.size()) : s;
  };
  const std::string token_table = c.names.token_table;
  each_name(table, c, false, [&](const TensorName& n, int l) {
    const std::string from = foreign(hf ? n.hf : n.gguf, l), to = potop_name(c, n, l);
    if (n.part == DecoderPart::kLmHead && c.tie_embeddings) {
      if (tensors.has(from)) fill.equal(token_table, from);  // a tied head stored twice
      return;
    }
    if (!written(c, n.part) || (n.part == DecoderPart::kPositionTable && c.positions != PositionEncoding::kLearned) ||
        (n.bias && !fill.wants(to)))
      return;
    if (!is_matrix(n)) {
      if (n.columns == Columns::kAll) fill.same(to, from);
      else fill.vector_part(to, from, column_range(c, n.columns, 0).first);
      return;
    }
    if (hf && !table.hf_linear) {  // GPT-2's Conv1D: (in, out), as potop
      POTOP_CHECK(n.columns == Columns::kAll, "a Conv1D weight is a whole matrix");
      fill.same(to, from);
      return;
    }
    const int64_t c0 = column_range(c, n.columns, 0).first;
    const int heads = n.columns == Columns::kQ ? c.n_head : c.kv_heads();
    fill.linear_columns(to, from, c0, !hf && rotated(n, c) ? rope_rows_from_interleaved(heads, c.head_size())
                                                            : std::vector<int64_t>{});
  });
  if (hf)
    for (int l = 0; l < c.n_layer; ++l)
      for (const std::string& buffer : table.hf_buffers)  // the causal mask, rotary frequencies: not parameters
        if (tensors.has(foreign(buffer, l))) fill.ignore(foreign(buffer, l));
}

ImportedModel imported_decoder(std::unique_ptr<CausalDecoder> model, nlohmann::json config, const TensorTable& table,
                               ForeignFormat format, const ForeignTensors& tensors, const std::string& architecture) {
  ParameterFiller fill(model->parameters(), tensors);
  fill_decoder(fill, table, model->shape(), format, tensors);
  fill.finish(architecture);
  ImportedModel out;
  out.notes = fill.notes();
  out.config = std::move(config);
  out.model = std::move(model);
  return out;
}

std::string foreign_name(const TensorTable& table, DecoderPart part, ForeignFormat format) {
  for (const TensorName& n : table.names)
    if (n.part == part) return format == ForeignFormat::kHuggingFace ? n.hf : n.gguf;
  return "";
}

std::vector<HfTensor> decoder_hf_tensors(const CausalDecoder& model, const TensorTable& table) {
  const BodyConfig& c = model.shape();
  std::vector<HfTensor> out;
  each_name(table, c, false, [&](const TensorName& n, int l) {
    if (!written(c, n.part)) return;
    const std::string name = with_layer(n.hf, l);
    if (n.part == DecoderPart::kPositionTable) {
      out.push_back({name, {c.block_size, c.n_embd}, position_table(model, n)});
      return;
    }
    auto [v, shape] = potop_values(model, n, l);
    if (is_matrix(n) && table.hf_linear) {
      v = transposed(v, shape[0], shape[1]);  // nn.Linear's (out, in)
      shape = {shape[1], shape[0]};
    }
    out.push_back({name, shape, std::move(v)});
  });
  return out;
}

void write_decoder_gguf_tensors(const CausalDecoder& model, const TensorTable& table, GgufTensors& t, GgmlType weights) {
  const BodyConfig& c = model.shape();
  each_name(table, c, table.gguf_globals_first, [&](const TensorName& n, int l) {
    if (!written(c, n.part)) return;
    const std::string name = with_layer(n.gguf, l);
    if (n.part == DecoderPart::kPositionTable) {
      t.matrix(name, position_table(model, n), c.block_size, c.n_embd, GgmlType::kF32);
      return;
    }
    auto [v, shape] = potop_values(model, n, l);
    if (is_table(n.part)) {
      t.matrix(name, v, shape[0], shape[1], weights);
    } else if (is_matrix(n)) {  // `out` rows of `in`
      v = transposed(v, shape[0], shape[1]);
      if (rotated(n, c)) v = interleave_rope_rows(v, n.columns == Columns::kQ ? c.n_head : c.kv_heads(), c.head_size(), shape[0]);
      t.matrix(name, v, shape[1], shape[0]);
    } else {
      t.vector(name, v);
    }
  });
}

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

}  // namespace potop
