// The text classifier (models/classifier/classifier.h): for each pooling and body (bidirectional
// with padding, causal) every parameter gradient against central differences, and the logits,
// loss and gradients against PyTorch (tests/torch/classifier_reference.py); --freeze-encoder
// (no gradient and no update on the body), the scores of eval against a hand-computed confusion
// matrix, the linear schedule, and a tiny classifier learning a separable toy task.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/file_io.h"
#include "core/rng.h"
#include "core/safetensors.h"
#include "models/classifier/classifier.h"
#include "models/classifier/classifier_data.h"
#include "support/testing.h"
#include "support/torch_oracle.h"
#include "train/adamw.h"
#include "train/batch_parallel.h"
#include "train/schedule.h"
#include "train/train_step.h"
#include "unit/kernels/kernel_testing.h"

namespace potop::test_classifier {
namespace {

constexpr int kB = 3, kT = 6, kV = 11;

ClassifierConfig small_config(bool causal, Pooling pooling, bool pooler = false) {
  ClassifierConfig c;
  c.pooler = pooler;
  c.body.vocab_size = kV, c.body.block_size = 8, c.body.n_layer = 1, c.body.n_head = 2, c.body.n_embd = 8;
  c.causal = causal, c.cls_sep = !causal, c.pooling = pooling;
  c.labels = {"a", "b", "c"};
  return c;
}

// Weights well away from the tiny init, so attention is far from uniform and a wrong gradient shows.
void randomise(Classifier& model, uint64_t seed) {
  for (const TensorSpec& s : model.parameters().layout().specs()) {
    std::vector<float> r = testing::random_vector(s.numel, seed++, 0.5f);
    if (s.name.find("ln_") != std::string::npos && s.name.find("weight") != std::string::npos)
      for (float& v : r) v += 1.0f;  // LayerNorm gains near 1
    std::copy(r.begin(), r.end(), model.parameters().values().at(s));
  }
}

struct Rows {
  std::vector<int> tokens = std::vector<int>(kB * kT, 0), lengths = {kT, 3, 5}, labels = {2, 0, 1};
  Batch batch() const {
    Batch b;
    b.B = kB, b.T = kT, b.tokens = tokens.data(), b.lengths = lengths.data(), b.labels = labels.data();
    return b;
  }
};

Rows small_rows() {
  Rows r;
  Rng rng(5);
  for (int b = 0; b < kB; ++b)
    for (int t = 0; t < r.lengths[size_t(b)]; ++t) r.tokens[size_t(b) * kT + t] = 1 + int(rng.below(kV - 1));
  return r;
}

struct Case {
  bool causal;
  Pooling pooling;
  bool pooler = false;  // BERT's tanh pooler
};

class ClassifierCases : public ::testing::TestWithParam<Case> {};

TEST_P(ClassifierCases, MatchFiniteDifferences) {
  Classifier model(small_config(GetParam().causal, GetParam().pooling, GetParam().pooler));
  randomise(model, 3);
  const Rows rows = small_rows();
  const Batch batch = rows.batch();
  model.parameters().zero_grad();
  model.forward(batch, Pass{});
  model.backward(1.0f);
  auto loss = [&] { return double(model.forward(batch, Pass{})); };
  for (const TensorSpec& s : model.parameters().layout().specs()) {
    float* value = model.parameters().values().at(s);
    const float* grad = model.parameters().grads().at(s);
    // atol 5e-4, as BERT's test has it: the loss is a float, and a difference over h = 1e-3 moves
    // by 1.2e-4 with each of its last bits (an AVX2 CPU's sums moved one by 3.7e-4); a larger h
    // is no cure, last-token pooling is too curved for it.
    EXPECT_TRUE(testing::gradient_matches(loss, value, grad, s.numel, 1e-3f, 5e-4, 3e-2)) << s.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Poolings, ClassifierCases,
                         ::testing::Values(Case{false, Pooling::kCls}, Case{false, Pooling::kMean},
                                           Case{false, Pooling::kLast}, Case{true, Pooling::kLast},
                                           Case{true, Pooling::kMean}, Case{false, Pooling::kCls, true}));

// The same model in PyTorch (tests/torch/classifier_reference.py: scripts/torch_gpt.py's body with
// the mask of the case, the pooling, the head): logits, loss and every gradient on identical
// weights and a padded batch. Rounding stays far below the bounds; a wrong mask, pooled row or
// head layout is orders of magnitude above them.
TEST_P(ClassifierCases, MatchPyTorch) {
  ClassifierConfig c = small_config(GetParam().causal, GetParam().pooling, GetParam().pooler);
  c.body.n_embd = 16, c.body.n_layer = 2, c.body.n_head = 4;
  Classifier model(c);
  randomise(model, 11);
  const Rows rows = small_rows();
  const testing::TempDir dir("classifier_parity");
  std::vector<SafetensorsEntry> weights;
  for (const TensorSpec& s : model.parameters().layout().specs())
    weights.push_back({s.name, Dtype::F32, s.shape, model.parameters().values().at(s)});
  write_safetensors(dir / "weights.safetensors", weights);
  write_safetensors(dir / "batch.safetensors", {{"tokens", Dtype::I32, {kB, kT}, rows.tokens.data()},
                                                {"lengths", Dtype::I32, {kB}, rows.lengths.data()},
                                                {"labels", Dtype::I32, {kB}, rows.labels.data()}});
  write_file_atomic(dir / "config.json", nlohmann::json({{"model", to_json(c)}}).dump());
  const int rc = testing::run_python("tests/torch/classifier_reference.py", {dir.path().string()});
  ASSERT_EQ(rc, 0) << "tests/torch/classifier_reference.py failed; torch is required: run scripts/setup.sh --all";
  const SafetensorsFile ref(dir / "reference.safetensors");
  model.parameters().zero_grad();
  const float loss = model.forward(rows.batch(), Pass{});
  model.backward(1.0f);
  testing::DiffReport forward("logits, loss", 1e-11);
  forward.add("logits", {model.logits(), size_t(kB) * 3}, ref.f32("logits"));
  forward.add("loss", {&loss, 1}, ref.f32("loss"));
  forward.check();
  testing::DiffReport grads("gradients", 1e-9);
  for (const TensorSpec& s : model.parameters().layout().specs())
    grads.add(s.name, {model.parameters().grads().at(s), s.numel}, ref.f32("grad." + s.name));
  grads.check();
}

TEST(Classifier, PaddingDoesNotChangeABidirectionalRow) {
  Classifier model(small_config(false, Pooling::kMean));
  randomise(model, 9);
  Rows rows = small_rows();
  model.forward(rows.batch(), Pass{});
  const std::vector<float> before(model.logits(), model.logits() + kB * 3);
  for (int t = rows.lengths[1]; t < kT; ++t) rows.tokens[size_t(kT) + t] = 7;  // other padding ids
  model.forward(rows.batch(), Pass{});
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(model.logits()[3 + k], before[size_t(3 + k)], 1e-5);
}

TEST(Classifier, FrozenEncoderGetsNoGradientAndNoUpdate) {
  for (const bool pooler : {false, true}) {  // the pooler is the head's: it learns
    SCOPED_TRACE(pooler ? "pooler" : "no pooler");
    ClassifierConfig c = small_config(false, Pooling::kCls, pooler);
    c.freeze_encoder = true;
    Classifier model(c);
    randomise(model, 4);
    const Rows rows = small_rows();
    model.parameters().zero_grad();
    model.forward(rows.batch(), Pass{});
    model.backward(1.0f);
    const std::vector<ParamId> head = model.head_parameters();
    AdamW adamw(model.parameters().layout(), {1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f});
    const std::vector<TensorSpec>& specs = model.parameters().layout().specs();
    for (ParamId id = 0; id < ParamId(specs.size()); ++id)
      if (std::find(head.begin(), head.end(), id) == head.end()) adamw.freeze(id);
    const std::vector<float> before(model.parameters().values().data(),
                                    model.parameters().values().data() + model.parameters().values().floats());
    adamw.step(model.parameters(), 1e-2f);
    for (ParamId id = 0; id < ParamId(specs.size()); ++id) {
      const bool is_head = std::find(head.begin(), head.end(), id) != head.end();
      const float* v = model.parameters().values().at(specs[size_t(id)]);
      const float* g = model.parameters().grads().at(specs[size_t(id)]);
      bool changed = false, has_grad = false;
      for (size_t i = 0; i < specs[size_t(id)].numel; ++i) {
        changed |= v[i] != before[specs[size_t(id)].offset + i];
        has_grad |= g[i] != 0.0f;
      }
      EXPECT_EQ(changed, is_head) << specs[size_t(id)].name;
      EXPECT_EQ(has_grad, is_head) << specs[size_t(id)].name;
    }
  }
}

TEST(Classifier, ScoresMatchAHandComputedConfusionMatrix) {
  // truth:     0 0 0 1 1 2 2 2 2     predicted: 0 1 0 1 2 2 2 0 2
  const ClassificationScores s =
      score_predictions({0, 0, 0, 1, 1, 2, 2, 2, 2}, {0, 1, 0, 1, 2, 2, 2, 0, 2}, 3);
  EXPECT_EQ(s.confusion, (std::vector<std::vector<long>>{{2, 1, 0}, {0, 1, 1}, {1, 0, 3}}));
  EXPECT_EQ(s.correct, 6);
  EXPECT_DOUBLE_EQ(s.accuracy, 6.0 / 9);
  // class 0: P 2/3, R 2/3; class 1: P 1/2, R 1/2; class 2: P 3/4, R 3/4
  EXPECT_DOUBLE_EQ(s.precision[0], 2.0 / 3);
  EXPECT_DOUBLE_EQ(s.recall[1], 0.5);
  EXPECT_DOUBLE_EQ(s.precision[2], 0.75);
  EXPECT_NEAR(s.macro_f1, (2.0 / 3 + 0.5 + 0.75) / 3, 1e-12);
  EXPECT_EQ(s.support, (std::vector<long>{3, 2, 4}));
  // A class in neither the truth nor the predictions is left out of macro-F1 (scikit-learn).
  const ClassificationScores t = score_predictions({0, 1}, {0, 0}, 3);
  EXPECT_DOUBLE_EQ(t.precision[0], 0.5);
  EXPECT_DOUBLE_EQ(t.recall[1], 0.0);
  EXPECT_NEAR(t.macro_f1, (2 * 0.5 * 1.0 / 1.5 + 0.0) / 2, 1e-12);
}

TEST(Classifier, LinearScheduleWarmsUpThenFallsToMinLr) {
  const LRSchedule s{1.0f, 0.0f, 4, 14, LrShape::kLinear};
  EXPECT_FLOAT_EQ(s.at(0), 0.2f);
  EXPECT_FLOAT_EQ(s.at(4), 1.0f);
  EXPECT_FLOAT_EQ(s.at(9), 0.5f);
  EXPECT_FLOAT_EQ(s.at(14), 0.0f);
  EXPECT_FLOAT_EQ(s.at(20), 0.0f);
}

// The class is which of two marker tokens (3 or 4) a text holds, anywhere among random filler
// (5..10) between [CLS] and [SEP]: the [CLS] vector must learn to look for it.
TEST(Learning, TinyClassifierLearnsWhichMarkerATextHolds) {
  ClassifierConfig c = small_config(false, Pooling::kCls);
  c.body.n_embd = 16, c.labels = {"three", "four"};
  Classifier model(c);
  model.init_weights(3);
  BatchParallel one(model, 1);
  AdamW optimizer(model.parameters().layout(), {3e-3f, 0.9f, 0.999f, 1e-8f, 0.0f});
  Rng rng(17);
  const int B = 32, T = 8;
  std::vector<int> tokens, lengths, labels;
  auto draw = [&] {
    tokens.assign(size_t(B) * T, kPadId), lengths.assign(size_t(B), 0), labels.assign(size_t(B), 0);
    for (int b = 0; b < B; ++b) {
      const int len = 4 + int(rng.below(T - 3));  // 4..8 tokens with [CLS] and [SEP]
      int* row = tokens.data() + size_t(b) * T;
      row[0] = kBosId, row[len - 1] = kEosId;
      for (int t = 1; t < len - 1; ++t) row[t] = 5 + int(rng.below(kV - 5));
      labels[size_t(b)] = int(rng.below(2));
      row[1 + int(rng.below(uint64_t(len - 2)))] = 3 + labels[size_t(b)];
      lengths[size_t(b)] = len;
    }
    Batch batch;
    batch.B = B, batch.T = T, batch.tokens = tokens.data(), batch.lengths = lengths.data(), batch.labels = labels.data();
    return batch;
  };
  float first = 0;
  for (int step = 0; step < 150; ++step) {
    const StepSettings s{3e-3f, /*grad_clip=*/1.0f, /*micro_batches=*/1, /*dropout_seed=*/7, step};
    const float loss = train_step(one, optimizer, s, draw).loss;
    if (step == 0) first = loss;
  }
  EXPECT_GT(first, 0.5f) << "an untrained classifier should be near chance (ln 2 = 0.69)";
  const Batch held_out = draw();
  const float loss = model.forward(held_out, Pass{});
  int correct = 0;
  for (int b = 0; b < B; ++b)
    correct += (model.logits()[2 * b + 1] > model.logits()[2 * b]) == (held_out.labels[b] == 1);
  EXPECT_LT(loss, 0.1f);
  EXPECT_EQ(correct, B);
}

}  // namespace
}  // namespace potop::test_classifier
