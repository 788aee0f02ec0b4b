// A model whose matrices are quantized (potop quantize): the linear layers read the quantized
// rows, the float copies give their memory back, a weights file round-trips them exactly, the
// tied LM head multiplies through a quantized copy of its table, and a matrix whose inputs are
// not whole blocks stays float32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include "checkpoint/quantize_model.h"
#include "checkpoint/weights.h"
#include "core/error.h"
#include "models/gpt/gpt.h"
#include "models/gpt/gpt_kind.h"
#include "tokenizer/char_tokenizer.h"

namespace potop::test_quantized_model {
namespace {

namespace fs = std::filesystem;

GPTConfig config(int n_embd) {
  GPTConfig c;
  c.vocab_size = 17, c.block_size = 16, c.n_layer = 2, c.n_head = 2, c.n_embd = n_embd;
  return c;
}

// The logits of one forward pass over `tokens`.
std::vector<float> logits_of(GPT& model, const std::vector<int>& tokens) {
  model.forward(Batch{{1, static_cast<int>(tokens.size())}, tokens.data(), nullptr}, Pass{});
  const size_t n = tokens.size() * static_cast<size_t>(model.config().vocab_size);
  return std::vector<float>(model.logits(), model.logits() + n);
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
  return worst;
}

const std::vector<int> kTokens = {1, 5, 9, 2, 16, 3, 3, 7, 11, 0};

TEST(QuantizedModel, LogitsFollowTheFloatModelByType) {
  GPT reference(config(64));
  reference.init_weights(7);
  const std::vector<float> f32 = logits_of(reference, kTokens);
  // The bound each format's rounding allows on these logits (|logit| ~ 1).
  for (auto [type, tol] : {std::pair{QuantType::kF16, 2e-3}, {QuantType::kQ8_0, 2e-2}, {QuantType::kQ4_0, 0.15}}) {
    GPT model(config(64));
    model.init_weights(7);
    const QuantizeReport report = quantize_matrices(model.parameters(), type);
    EXPECT_EQ(report.matrices, 8) << to_string(type);  // qkv, proj, fc, fc proj per layer
    EXPECT_TRUE(report.kept.empty());
    EXPECT_LT(report.bytes_after, report.bytes_before);
    const double diff = max_abs_diff(logits_of(model, kTokens), f32);
    EXPECT_LT(diff, tol) << to_string(type);
    EXPECT_GT(diff, 0.0) << to_string(type) << ": the quantized rows were not used";
    // The float copies of the quantized matrices are zero: nothing reads them.
    const ParameterSet& p = model.parameters();
    for (size_t i = 0; i < p.layout().specs().size(); ++i) {
      const TensorSpec& s = p.layout().specs()[i];
      if (!s.matrix) continue;
      const float* w = p.value(static_cast<ParamId>(i));
      EXPECT_TRUE(std::all_of(w, w + s.numel, [](float x) { return x == 0.0f; })) << s.name;
    }
  }
}

TEST(QuantizedModel, DenseValuesAreTheDequantizedMatrix) {
  GPT model(config(32));
  model.init_weights(3);
  const ParameterSet& p = model.parameters();
  const ParamId id = static_cast<ParamId>(p.layout().find("h.0.mlp.c_fc.weight") - p.layout().specs().data());
  const std::vector<float> before = p.dense_values(id);
  quantize_matrices(model.parameters(), QuantType::kQ8_0);
  const std::vector<float> after = p.dense_values(id);
  ASSERT_EQ(after.size(), before.size());
  // q8_0's error is at most half a step, d/2 = amax/254, of a block's largest weight.
  double worst = 0, amax = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    worst = std::max(worst, std::abs(double(after[i]) - double(before[i])));
    amax = std::max(amax, std::abs(double(before[i])));
  }
  EXPECT_GT(worst, 0.0);
  EXPECT_LE(worst, amax / 254 * 1.01);
}

TEST(QuantizedModel, WeightsFileRoundTripsExactly) {
  const GPTConfig c = config(64);
  std::vector<char32_t> chars;
  for (char32_t ch = U'a'; ch <= U'q'; ++ch) chars.push_back(ch);
  CharTokenizer tokenizer(chars);
  ASSERT_EQ(tokenizer.size(), c.vocab_size);
  const fs::path path = fs::temp_directory_path() / ("potop-quantized-" + std::to_string(::getpid()) + ".safetensors");
  for (QuantType type : {QuantType::kF16, QuantType::kQ8_0, QuantType::kQ4_0}) {
    GPT model(c);
    model.init_weights(11);
    const ParameterSet& p = model.parameters();
    const ParamId id = static_cast<ParamId>(p.layout().find("h.1.attn.c_attn.weight") - p.layout().specs().data());
    const int K = c.n_embd, N = 3 * c.n_embd;
    const std::vector<float> W = p.dense_values(id);  // (K, N)
    quantize_matrices(model.parameters(), type);
    EXPECT_EQ(p.quantized(id)->layout, quant_best_layout(type));  // interleaved where the CPU reads it so
    const std::vector<float> expected = logits_of(model, kTokens);
    save_weights(path, model.parameters(), ModelHeader{"gpt", to_json(c), &tokenizer}, {{"step", "5"}});
    const SafetensorsFile file(path);
    EXPECT_EQ(read_quantization(file.metadata(), file.path()), to_string(type));
    EXPECT_EQ(file.info("h.1.attn.c_attn.weight").dtype, type == QuantType::kF16 ? Dtype::F16 : Dtype::U8);
    EXPECT_EQ(file.info("wte.weight").dtype, Dtype::F32);  // the head's quantized copy is made again at load
    // The file holds ggml's rows, whatever the layout in memory: row n is Wᵀ's row n quantized.
    std::vector<uint8_t> rows(quant_row_bytes(type, K) * N);
    std::vector<float> column(K);
    for (int n = 0; n < N; ++n) {
      for (int k = 0; k < K; ++k) column[k] = W[static_cast<size_t>(k) * N + n];
      quantize_row(type, column.data(), K, rows.data() + n * quant_row_bytes(type, K));
    }
    const std::span<const std::byte> stored = file.bytes("h.1.attn.c_attn.weight");
    ASSERT_EQ(stored.size(), rows.size());
    EXPECT_EQ(std::memcmp(stored.data(), rows.data(), rows.size()), 0) << to_string(type);
    GPT loaded(c);
    load_weights(file, loaded.parameters());
    EXPECT_EQ(loaded.parameters().quantization(), to_string(type));
    EXPECT_EQ(logits_of(loaded, kTokens), expected) << to_string(type);
    EXPECT_THROW(refuse_quantized(file.metadata(), "x", "training"), Error);
  }
  fs::remove(path);
}

// The LM head, tied to the token embedding, multiplies through a quantized copy of the table;
// the embedding's lookups read the float rows, which the weights file keeps.
TEST(QuantizedModel, TiedHeadReadsAQuantizedCopyOfTheTable) {
  const GPTConfig c = config(64);
  GPT model(c);
  model.init_weights(5);
  ParameterSet& p = model.parameters();
  const ParamId wte = static_cast<ParamId>(p.layout().find("wte.weight") - p.layout().specs().data());
  const std::vector<float> table(p.value(wte), p.value(wte) + p.spec(wte).numel);
  EXPECT_EQ(p.quantized_copy(wte), nullptr);
  quantize_matrices(p, QuantType::kQ8_0);
  const QuantizedMatrix* copy = p.quantized_copy(wte);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->type, QuantType::kQ8_0);
  EXPECT_EQ(copy->rows, c.vocab_size);
  EXPECT_EQ(copy->cols, c.n_embd);
  EXPECT_EQ(p.quantized(wte), nullptr);  // not a quantized matrix: its floats stay
  EXPECT_TRUE(std::equal(table.begin(), table.end(), p.value(wte)));
  // The copy is the table quantized row by row.
  const std::vector<uint8_t> rows = copy->rows_data();
  std::vector<uint8_t> want(rows.size());
  for (int v = 0; v < c.vocab_size; ++v)
    quantize_row(QuantType::kQ8_0, table.data() + size_t(v) * c.n_embd, c.n_embd, want.data() + v * copy->row_bytes());
  EXPECT_EQ(rows, want);
  // The head reads it: a copy of zeros gives zero logits (the GPT's head has no bias).
  const std::vector<float> before = logits_of(model, kTokens);
  EXPECT_TRUE(std::any_of(before.begin(), before.end(), [](float x) { return x != 0.0f; }));
  QuantizedMatrix zeros{QuantType::kQ8_0, c.vocab_size, c.n_embd, QuantLayout::kRows, {}};
  zeros.data.assign(size_t(c.vocab_size) * zeros.row_bytes(), 0);
  p.set_quantized_copy(wte, std::move(zeros));
  const std::vector<float> after = logits_of(model, kTokens);
  EXPECT_TRUE(std::all_of(after.begin(), after.end(), [](float x) { return x == 0.0f; }));
  // A model without quantized matrices has no copies.
  GPT plain(c);
  EXPECT_EQ(plain.parameters().quantized_copy(wte), nullptr);
}

TEST(QuantizedModel, MatricesWithPartialBlocksStayFloat) {
  GPT model(config(48));  // c_attn, c_proj, c_fc: 48 inputs; the MLP's c_proj: 192
  model.init_weights(1);
  const QuantizeReport report = quantize_matrices(model.parameters(), QuantType::kQ4_0);
  EXPECT_EQ(report.matrices, 2);
  EXPECT_EQ(report.kept.size(), 6u);
  const ParameterSet& p = model.parameters();
  EXPECT_EQ(p.quantized(static_cast<ParamId>(p.layout().find("h.0.attn.c_attn.weight") - p.layout().specs().data())),
            nullptr);
  EXPECT_NE(p.quantized(static_cast<ParamId>(p.layout().find("h.0.mlp.c_proj.weight") - p.layout().specs().data())),
            nullptr);
  // f16 has no blocks: every matrix.
  GPT wide(config(48));
  EXPECT_EQ(quantize_matrices(wide.parameters(), QuantType::kF16).matrices, 8);
}

TEST(QuantizedModel, ReplicasShareTheQuantizedMatrices) {
  GPT model(config(32));
  model.init_weights(2);
  quantize_matrices(model.parameters(), QuantType::kQ8_0);
  const ParameterSet replica = model.parameters().replica();
  EXPECT_TRUE(replica.any_quantized());
  EXPECT_EQ(replica.quantization(), "q8_0");
}

}  // namespace
}  // namespace potop::test_quantized_model
