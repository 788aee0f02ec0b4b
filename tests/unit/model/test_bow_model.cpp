// The bag-of-words LM (model/bow.h), all five attention kinds: every parameter gradient of the
// mean loss against central differences, the loss, the attention weights and every gradient
// against PyTorch on identical weights (tests/torch/bow_reference.py), and batch-parallel
// replicas against one model.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/safetensors.h"
#include "unit/kernels/kernel_testing.h"
#include "models/bow/bow.h"
#include "support/testing.h"
#include "support/torch_oracle.h"
#include "train/batch_parallel.h"
#include "models/bow/bow_trainer.h"

namespace potop {
namespace {

constexpr int kB = 2, kT = 6, kV = 9;
const BowAttention kKinds[] = {BowAttention::kNone, BowAttention::kMean, BowAttention::kIdf, BowAttention::kDot,
                               BowAttention::kAdditive};

BowConfig small_config(BowAttention kind) {
  BowConfig c;
  c.vocab_size = kV, c.block_size = kT, c.n_embd = 4, c.attn_hidden = 3, c.attention = kind;
  return c;
}

// Weights far from GPT-2's tiny init, so the scores (and so the attention) are far from uniform
// and a wrong score gradient cannot hide.
void randomise(BowLM& model, uint64_t seed) {
  Arena& values = model.parameters().values();
  const Layout& layout = model.parameters().layout();
  for (const TensorSpec& s : layout.specs()) {
    const std::vector<float> r = testing::random_vector(s.numel, seed++, 0.7f);
    std::copy(r.begin(), r.end(), values.at(s));
  }
}

struct Data {
  std::vector<int> tokens, targets;
};

Data small_data(uint64_t seed) {
  Rng rng(seed);
  Data d;
  for (int i = 0; i < kB * kT; ++i) {
    d.tokens.push_back(static_cast<int>(rng.below(kV)));
    d.targets.push_back(i % 5 == 4 ? -1 : static_cast<int>(rng.below(kV)));  // some targets not counted
  }
  return d;
}

class BowModel : public ::testing::TestWithParam<BowAttention> {};

TEST_P(BowModel, GradientsMatchFiniteDifferences) {
  BowLM model(small_config(GetParam()));
  randomise(model, 7);
  const Data d = small_data(3);
  const Batch batch{{kB, kT}, d.tokens.data(), d.targets.data()};
  model.parameters().zero_grad();
  model.forward(batch, Pass{});
  model.backward(1.0f);
  auto loss = [&] { return double(model.forward(batch, Pass{})); };
  for (const TensorSpec& s : model.parameters().layout().specs()) {
    float* value = model.parameters().values().at(s);
    const float* grad = model.parameters().grads().at(s);
    if (s.name == "bag.log_idf") {  // a fixed table: never trained
      for (size_t i = 0; i < s.numel; ++i) EXPECT_EQ(grad[i], 0.0f);
      continue;
    }
    EXPECT_TRUE(testing::gradient_matches(loss, value, grad, s.numel, 1e-2f, 2e-4, 2e-2)) << s.name;
  }
}

TEST_P(BowModel, ReplicasGiveTheModelsLossAndGradients) {
  BowLM model(small_config(GetParam()));
  randomise(model, 11);
  const Data d = small_data(5);
  const Batch batch{{kB, kT}, d.tokens.data(), d.targets.data()};
  model.parameters().zero_grad();
  const float one = model.forward(batch, Pass{});
  model.backward(1.0f);
  const std::vector<float> single(model.parameters().grads().data(),
                                  model.parameters().grads().data() + model.parameters().grads().floats());
  BatchParallel parallel(model, 2);
  parallel.reserve({kB, kT});
  parallel.zero_grad();
  const float two = parallel.forward(batch, Pass{});
  parallel.backward(1.0f);
  parallel.reduce_grads();
  EXPECT_NEAR(one, two, 1e-6);
  const float* g = model.parameters().grads().data();
  for (size_t i = 0; i < single.size(); ++i) EXPECT_NEAR(g[i], single[i], 1e-5) << i;
}

INSTANTIATE_TEST_SUITE_P(AllKinds, BowModel, ::testing::ValuesIn(kKinds),
                         [](const ::testing::TestParamInfo<BowAttention>& param_info) { return to_string(param_info.param); });

TEST(BowModelTorch, LossWeightsAndGradientsMatchPyTorch) {
  nlohmann::json cases = nlohmann::json::object();
  std::vector<SafetensorsEntry> entries;
  std::vector<std::unique_ptr<BowLM>> models;
  std::vector<Data> data;
  std::vector<float> losses;
  data.reserve(5);
  for (BowAttention kind : kKinds) {
    const std::string c = to_string(kind);
    cases[c] = {{"kernel", "model"}, {"attention", c}};
    models.push_back(std::make_unique<BowLM>(small_config(kind)));
    BowLM& model = *models.back();
    randomise(model, 100 + models.size());
    data.push_back(small_data(200 + models.size()));
    const Data& d = data.back();
    entries.push_back({c + ".tokens", Dtype::I32, {kB, kT}, d.tokens.data()});
    entries.push_back({c + ".targets", Dtype::I32, {kB, kT}, d.targets.data()});
    for (const TensorSpec& s : model.parameters().layout().specs())
      entries.push_back({c + "." + s.name, Dtype::F32, s.shape, model.parameters().values().at(s)});
    model.parameters().zero_grad();
    losses.push_back(model.forward(Batch{{kB, kT}, d.tokens.data(), d.targets.data()}, Pass{}));
    model.backward(1.0f);
  }
  const testing::TempDir dir("torch_bow_model");
  write_safetensors(dir / "inputs.safetensors", entries, {{"potop.bow", cases.dump()}});
  const int rc = testing::run_python("tests/torch/bow_reference.py",
                                     {(dir / "inputs.safetensors").string(), (dir / "reference.safetensors").string()});
  ASSERT_EQ(rc, 0) << "tests/torch/bow_reference.py failed; torch is required: run scripts/setup.sh --all";
  const SafetensorsFile ref(dir / "reference.safetensors");
  size_t compared = 0;
  for (size_t m = 0; m < models.size(); ++m) {
    BowLM& model = *models[m];
    const std::string c = to_string(model.config().attention);
    testing::DiffReport report("bow model " + c, 1e-10);
    report.add(c + ".loss", std::vector<float>{losses[m]}, ref.f32(c + ".loss"));
    const size_t n = size_t(kB) * kT * kT;
    std::vector<float> weights(n, 0.0f);
    if (const float* w = model.attention_weights()) weights.assign(w, w + n);
    report.add(c + ".weights", weights, ref.f32(c + ".weights"));
    compared += 2;
    for (const TensorSpec& s : model.parameters().layout().specs()) {
      if (s.name == "bag.log_idf") continue;  // constant: no gradient on either side
      const float* g = model.parameters().grads().at(s);
      ASSERT_TRUE(ref.has(c + ".d." + s.name)) << c << ".d." << s.name;
      report.add(c + ".d." + s.name, std::vector<float>(g, g + s.numel), ref.f32(c + ".d." + s.name));
      ++compared;
    }
    report.check();
  }
  EXPECT_EQ(ref.names().size(), compared) << "the reference returned tensors potop did not compare";
}

TEST(BowIdf, DocumentFrequenciesCountLinesOnce) {
  // ids: 5 = newline; lines "1 2 1", "", "2 3"
  const std::vector<int> tokens{1, 2, 1, 5, 5, 2, 3};
  std::vector<long> df;
  EXPECT_EQ(document_frequencies(tokens, 5, 6, df), 2);
  EXPECT_EQ(df, (std::vector<long>{0, 1, 2, 1, 0, 0}));
  BowLM model(small_config(BowAttention::kIdf));
  std::vector<long> counts(kV, 0);
  counts[1] = 2;  // in both documents: idf = ln(3/3) + 1 = 1, ln idf = 0
  model.set_idf(counts, 2);
  const TensorSpec& table = model.parameters().layout().specs().at(1);
  ASSERT_EQ(table.name, "bag.log_idf");
  const float* log_idf = model.parameters().values().at(table);
  EXPECT_FLOAT_EQ(log_idf[1], 0.0f);
  EXPECT_FLOAT_EQ(log_idf[0], static_cast<float>(std::log(std::log(3.0) + 1.0)));  // in no document
}

}  // namespace
}  // namespace potop
