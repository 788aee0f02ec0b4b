// The bag-of-words LM's kernels (additive_score, dot_score, bag_average): each backward against
// central differences of its forward, each store rule, and forward and backward against PyTorch
// (tests/torch/bow_reference.py) on the same inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "models/bow/additive_score.h"
#include "models/bow/bag_average.h"
#include "models/bow/dot_score.h"
#include "unit/kernels/kernel_testing.h"
#include "support/testing.h"
#include "support/torch_oracle.h"

namespace potop {
namespace {

using testing::gradient_matches;
using testing::random_vector;

constexpr int B = 2, T = 5, H = 4, C = 3;

// Σ w ⊙ scores over the earlier-word entries only (the rest are -inf by the mask).
double masked_weighted_sum(const std::vector<float>& scores, const std::vector<float>& w) {
  double s = 0;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int k = 0; k < t; ++k) {
        const size_t i = (size_t(b) * T + t) * T + k;
        s += double(w[i]) * scores[i];
      }
  return s;
}

TEST(AdditiveScore, MasksLaterWordsAndMatchesFiniteDifferences) {
  auto keys = random_vector(size_t(B) * T * H, 1), queries = random_vector(size_t(B) * T * H, 2);
  auto v = random_vector(H, 3), w = random_vector(size_t(B) * T * T, 4);
  std::vector<float> scores(size_t(B) * T * T);
  auto loss = [&] {
    additive_score_forward(scores.data(), keys.data(), queries.data(), v.data(), B, T, H);
    return masked_weighted_sum(scores, w);
  };
  loss();
  for (int t = 0; t < T; ++t)
    for (int k = t; k < T; ++k) EXPECT_EQ(scores[size_t(t) * T + k], -std::numeric_limits<float>::infinity());
  std::vector<float> dkeys(keys.size()), dqueries(queries.size()), dv(v.size());
  additive_score_backward(dkeys.data(), dqueries.data(), dv.data(), w.data(), keys.data(), queries.data(), v.data(), B,
                          T, H);
  EXPECT_TRUE(gradient_matches(loss, keys.data(), dkeys.data(), keys.size(), 1e-2f, 1e-3, 1e-2));
  EXPECT_TRUE(gradient_matches(loss, queries.data(), dqueries.data(), queries.size(), 1e-2f, 1e-3, 1e-2));
  EXPECT_TRUE(gradient_matches(loss, v.data(), dv.data(), v.size(), 1e-2f, 1e-3, 1e-2));
}

TEST(AdditiveScore, StoresAsGradStoreSays) {
  auto keys = random_vector(size_t(B) * T * H, 5), queries = random_vector(size_t(B) * T * H, 6);
  auto v = random_vector(H, 7), ds = random_vector(size_t(B) * T * T, 8);
  EXPECT_TRUE(testing::stores_as_grad_store_says(
      {keys.size(), queries.size(), v.size()}, 2, [&](GradStore store, const std::vector<float*>& g) {
        additive_score_backward(g[0], g[1], g[2], ds.data(), keys.data(), queries.data(), v.data(), B, T, H, store);
      }));
}

TEST(DotScore, MasksLaterWordsAndMatchesFiniteDifferences) {
  auto x = random_vector(size_t(B) * T * C, 11), w = random_vector(size_t(B) * T * T, 12);
  const float scale = 1.0f / std::sqrt(float(C));
  std::vector<float> scores(size_t(B) * T * T);
  auto loss = [&] {
    dot_score_forward(scores.data(), x.data(), scale, B, T, C);
    return masked_weighted_sum(scores, w);
  };
  loss();
  EXPECT_EQ(scores[0], -std::numeric_limits<float>::infinity());  // position 0 has no earlier word
  EXPECT_FLOAT_EQ(scores[size_t(1) * T + 0], scale * (x[0] * x[3] + x[1] * x[4] + x[2] * x[5]));
  std::vector<float> dx(x.size());
  dot_score_backward(dx.data(), w.data(), x.data(), scale, B, T, C);
  EXPECT_TRUE(gradient_matches(loss, x.data(), dx.data(), x.size(), 1e-2f, 1e-3, 1e-2));
}

TEST(DotScore, StoresAsGradStoreSays) {
  auto x = random_vector(size_t(B) * T * C, 13), ds = random_vector(size_t(B) * T * T, 14);
  EXPECT_TRUE(testing::stores_as_grad_store_says({x.size()}, 1, [&](GradStore store, const std::vector<float*>& g) {
    dot_score_backward(g[0], ds.data(), x.data(), 0.5f, B, T, C, store);
  }));
}

TEST(BagAverage, WeightsSumToOneOverEarlierWordsAndMatchFiniteDifferences) {
  auto scores = random_vector(size_t(B) * T * T, 21), x = random_vector(size_t(B) * T * C, 22);
  auto w = random_vector(size_t(B) * T * C, 23);
  std::vector<float> out(x.size()), weights(scores.size());
  auto loss = [&] {
    bag_average_forward(out.data(), weights.data(), scores.data(), x.data(), B, T, C);
    return testing::weighted_sum(out.data(), w.data(), out.size());
  };
  loss();
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      double sum = 0;
      for (int k = 0; k < T; ++k) {
        const float a = weights[(size_t(b) * T + t) * T + k];
        if (k >= t) {
          EXPECT_EQ(a, 0.0f);
        }
        sum += a;
      }
      EXPECT_NEAR(sum, t == 0 ? 0.0 : 1.0, 1e-6) << "row " << t;
    }
  for (int c = 0; c < C; ++c) EXPECT_EQ(out[size_t(c)], 0.0f);           // A_0 = 0
  for (int c = 0; c < C; ++c) EXPECT_FLOAT_EQ(out[size_t(C + c)], x[size_t(c)]);  // A_1 = x_0
  std::vector<float> dx(x.size()), dscores(scores.size());
  bag_average_backward(dx.data(), dscores.data(), w.data(), weights.data(), x.data(), B, T, C);
  EXPECT_TRUE(gradient_matches(loss, x.data(), dx.data(), x.size(), 1e-2f, 1e-3, 1e-2));
  EXPECT_TRUE(gradient_matches(loss, scores.data(), dscores.data(), scores.size(), 1e-2f, 1e-3, 1e-2));
}

TEST(BagAverage, StoresAsGradStoreSays) {
  auto scores = random_vector(size_t(B) * T * T, 24), x = random_vector(size_t(B) * T * C, 25);
  auto dout = random_vector(size_t(B) * T * C, 26);
  std::vector<float> out(x.size()), weights(scores.size());
  bag_average_forward(out.data(), weights.data(), scores.data(), x.data(), B, T, C);
  EXPECT_TRUE(testing::stores_as_grad_store_says(
      {x.size(), scores.size()}, 2, [&](GradStore store, const std::vector<float*>& g) {
        bag_average_backward(g[0], g[1], dout.data(), weights.data(), x.data(), B, T, C, store);
      }));
}

// Each kernel's outputs and gradients against bow_reference.py on the same inputs.
TEST(BowKernelsTorch, MatchPyTorch) {
  nlohmann::json cases = nlohmann::json::object();
  std::vector<std::pair<std::string, std::vector<float>>> inputs, results;  // name, values
  std::vector<std::pair<std::string, Shape>> in_shapes;
  auto in = [&](const std::string& name, const Shape& shape, uint64_t seed) -> std::vector<float>& {
    inputs.emplace_back(name, random_vector(shape_numel(shape), seed));
    in_shapes.emplace_back(name, shape);
    return inputs.back().second;
  };
  auto result = [&](const std::string& name, size_t n) -> std::vector<float>& {
    results.emplace_back(name, std::vector<float>(n));
    return results.back().second;
  };
  inputs.reserve(32), results.reserve(32);
  const int b = 3, t = 7, h = 6, c = 5;
  {
    cases["additive"] = {{"kernel", "additive_score"}};
    auto& keys = in("additive.keys", {b, t, h}, 31);
    auto& queries = in("additive.queries", {b, t, h}, 32);
    auto& v = in("additive.v", {h}, 33);
    auto& ds = in("additive.dscores", {b, t, t}, 34);
    additive_score_forward(result("additive.scores", size_t(b) * t * t).data(), keys.data(), queries.data(), v.data(),
                           b, t, h);
    auto& dk = result("additive.dkeys", keys.size());
    auto& dq = result("additive.dqueries", queries.size());
    auto& dv = result("additive.dv", v.size());
    additive_score_backward(dk.data(), dq.data(), dv.data(), ds.data(), keys.data(), queries.data(), v.data(), b, t, h);
  }
  {
    const float scale = 1.0f / std::sqrt(float(c));
    cases["dot"] = {{"kernel", "dot_score"}, {"scale", scale}};
    auto& x = in("dot.x", {b, t, c}, 41);
    auto& ds = in("dot.dscores", {b, t, t}, 42);
    dot_score_forward(result("dot.scores", size_t(b) * t * t).data(), x.data(), scale, b, t, c);
    dot_score_backward(result("dot.dx", x.size()).data(), ds.data(), x.data(), scale, b, t, c);
  }
  {
    cases["bag"] = {{"kernel", "bag_average"}};
    auto& scores = in("bag.scores", {b, t, t}, 51);
    auto& x = in("bag.x", {b, t, c}, 52);
    auto& dout = in("bag.dout", {b, t, c}, 53);
    auto& out = result("bag.out", x.size());
    auto& weights = result("bag.weights", scores.size());
    bag_average_forward(out.data(), weights.data(), scores.data(), x.data(), b, t, c);
    bag_average_backward(result("bag.dx", x.size()).data(), result("bag.dscores", scores.size()).data(), dout.data(),
                         weights.data(), x.data(), b, t, c);
  }
  std::vector<SafetensorsEntry> entries;
  for (size_t i = 0; i < inputs.size(); ++i)
    entries.push_back({inputs[i].first, Dtype::F32, in_shapes[i].second, inputs[i].second.data()});
  const testing::TempDir dir("torch_bow_kernels");
  write_safetensors(dir / "inputs.safetensors", entries, {{"potop.bow", cases.dump()}});
  const int rc = testing::run_python("tests/torch/bow_reference.py",
                                     {(dir / "inputs.safetensors").string(), (dir / "reference.safetensors").string()});
  ASSERT_EQ(rc, 0) << "tests/torch/bow_reference.py failed; torch is required: run scripts/setup.sh --all";
  const SafetensorsFile ref(dir / "reference.safetensors");
  testing::DiffReport report("bow kernels", 1e-10);
  for (const auto& [name, values] : results) {
    ASSERT_TRUE(ref.has(name)) << "the reference lacks " << name;
    report.add(name, values, ref.f32(name));
  }
  EXPECT_EQ(ref.names().size(), results.size()) << "the reference returned tensors potop did not produce";
  report.check();
}

}  // namespace
}  // namespace potop
