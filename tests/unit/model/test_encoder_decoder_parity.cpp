// potop's encoder-decoder against the PyTorch reference (scripts/torch_encoder_decoder.py via
// tests/torch/encoder_decoder_reference.py) on identical weights and batch: logits, loss (with
// label smoothing), every parameter gradient and the cross-attention probabilities, with and
// without source padding, post-LN and pre-LN, sinusoidal and learned positions. Errors are NMSE,
// with the bounds of the GPT's parity test (test_torch_parity.cpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/weights.h"
#include "core/file_io.h"
#include "core/rng.h"
#include "core/safetensors.h"
#include "models/encoder_decoder/encoder_decoder.h"
#include "support/testing.h"
#include "support/torch_oracle.h"
#include "tokenizer/char_tokenizer.h"
#include "train/batch_parallel.h"

namespace potop::test_encoder_decoder_parity {
namespace {

using testing::DiffReport;

constexpr double kForwardNmse = 1e-11;
constexpr double kGradNmse = 1e-10;

struct Case {
  std::string name;
  NormPlacement norm = NormPlacement::kPost;
  PositionEncoding positions = PositionEncoding::kSinusoidal;
  bool padding = true;
  float label_smoothing = 0.1f;
};

EncoderDecoderConfig small_config(const Case& c) {
  EncoderDecoderConfig config;
  config.vocab_size = 19;
  config.block_size = 12;
  config.n_layer = 2;
  config.n_head = 2;
  config.n_embd = 16;
  config.dropout = 0.0f;
  config.norm = c.norm;
  config.positions = c.positions;
  config.label_smoothing = c.label_smoothing;
  return config;
}

// The model's init, spread (support/torch_oracle.h) so that a wrong kernel cannot pass by accident.
void init_model(EncoderDecoder& model, uint64_t seed) {
  model.init_weights(seed);
  testing::spread_init(model.parameters(), seed, {"wte.weight"});
}

void run_case(const Case& c) {
  const EncoderDecoderConfig config = small_config(c);
  const int B = 3, S = 7, T = 6, V = config.vocab_size;
  EncoderDecoder model(config);
  init_model(model, 42);

  Rng rng(7);
  std::vector<int> source(B * S), lengths{S, c.padding ? 4 : S, c.padding ? 1 : S}, tokens(B * T), targets(B * T);
  for (int b = 0; b < B; ++b)
    for (int s = 0; s < S; ++s) source[b * S + s] = s < lengths[b] ? static_cast<int>(rng.below(V)) : 0;
  for (int i = 0; i < B * T; ++i) {
    tokens[i] = static_cast<int>(rng.below(V));
    targets[i] = i % 5 == 4 ? -1 : static_cast<int>(rng.below(V));  // -1: target padding, not counted
  }

  const testing::TempDir dir("encdec_parity_" + c.name);
  std::vector<char32_t> chars;
  for (int i = 0; i < V; ++i) chars.push_back(U'a' + i);
  const CharTokenizer tokenizer(chars);
  save_weights(dir / "weights.safetensors", model.parameters(),
               ModelHeader{"encoder-decoder", to_json(config), &tokenizer});
  write_safetensors(dir / "batch.safetensors", {{"source", Dtype::I32, {B, S}, source.data()},
                                                {"source_lengths", Dtype::I32, {B}, lengths.data()},
                                                {"tokens", Dtype::I32, {B, T}, tokens.data()},
                                                {"targets", Dtype::I32, {B, T}, targets.data()}});
  write_file_atomic(dir / "config.json", nlohmann::json{{"model", to_json(config)}}.dump(2));
  const int rc = testing::run_python("tests/torch/encoder_decoder_reference.py", {dir.path().string()});
  ASSERT_EQ(rc, 0) << "tests/torch/encoder_decoder_reference.py failed (exit " << rc
                   << "); torch is required: run scripts/setup.sh --all";
  const SafetensorsFile ref(dir / "reference.safetensors");

  std::printf("[%s]\n", c.name.c_str());
  Batch batch;
  batch.B = B, batch.T = T, batch.S = S;
  batch.tokens = tokens.data(), batch.targets = targets.data();
  batch.source = source.data(), batch.source_lengths = lengths.data();
  ParameterSet& params = model.parameters();
  params.zero_grad();
  const float loss = model.forward(batch, {/*training=*/true, /*dropout_seed=*/1});
  model.backward(1.0f);
  DiffReport forward("logits, loss, cross-attention", kForwardNmse);
  forward.add("logits", {model.logits(), size_t(B) * T * V}, ref.f32("logits"));
  forward.add("loss", {&loss, 1}, ref.f32("loss"));
  for (int l = 0; l < config.n_layer; ++l) {
    const std::string name = "cross." + std::to_string(l);
    forward.add(name, {model.cross_attention(l), size_t(B) * config.n_head * T * S}, ref.f32(name));
  }
  forward.check();
  DiffReport grads("gradients", kGradNmse);
  for (const TensorSpec& spec : params.layout().specs()) {
    EXPECT_EQ(ref.info("grad." + spec.name).shape, spec.shape) << spec.name;
    grads.add("grad." + spec.name, {params.grads().at(spec), spec.numel}, ref.f32("grad." + spec.name));
  }
  grads.check();

  // Two replicas on the batch's rows (BatchParallel shards the source side too) give the same
  // gradients as one model on the whole batch.
  const std::vector<float> whole(params.grads().data(), params.grads().data() + params.grads().floats());
  BatchParallel two(model, 2);
  params.zero_grad();
  two.forward(batch, {true, 1});
  two.backward(1.0f);
  two.reduce_grads();
  DiffReport sharded("two replicas vs one model", kGradNmse);
  sharded.add("grads", {params.grads().data(), params.grads().floats()}, whole);
  sharded.check();
}

TEST(EncoderDecoderParity, PostLnSinusoidalPadded) { run_case({"post_sin_pad"}); }
TEST(EncoderDecoderParity, PostLnNoPaddingNoSmoothing) {
  run_case({"post_nopad", NormPlacement::kPost, PositionEncoding::kSinusoidal, false, 0.0f});
}
TEST(EncoderDecoderParity, PreLnLearnedPadded) {
  run_case({"pre_learned_pad", NormPlacement::kPre, PositionEncoding::kLearned, true, 0.1f});
}

}  // namespace
}  // namespace potop::test_encoder_decoder_parity
