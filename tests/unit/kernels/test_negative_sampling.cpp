// kernels/negative_sampling: the loss and gradients against central differences (in double via
// the loss itself) and against PyTorch's binary_cross_entropy_with_logits on identical vectors;
// the in-place SGD form against the exact gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/safetensors.h"
#include "unit/kernels/kernel_testing.h"
#include "models/word2vec/negative_sampling.h"
#include "support/testing.h"
#include "support/torch_oracle.h"

namespace potop {
namespace {

struct Example {
  int targets, dim;
  std::vector<float> h, outputs;
};

Example example(int targets, int dim, uint64_t seed, float scale) {
  return {targets, dim, testing::random_vector(static_cast<size_t>(dim), seed, scale),
          testing::random_vector(static_cast<size_t>(targets) * dim, seed + 1, scale)};
}

TEST(NegativeSampling, GradientsMatchFiniteDifferences) {
  for (auto [targets, dim] : {std::pair{1, 1}, {6, 7}, {11, 100}, {3, 33}}) {
    Example e = example(targets, dim, 40 + static_cast<uint64_t>(dim), 0.6f);
    std::vector<float> dh(e.h.size(), 0.0f), dout(e.outputs.size(), 0.0f);
    negative_sampling_forward_backward(dh.data(), dout.data(), e.h.data(), e.outputs.data(), targets, dim);
    std::vector<float> scratch_h(e.h.size()), scratch_o(e.outputs.size());
    auto loss = [&] {
      std::fill(scratch_h.begin(), scratch_h.end(), 0.0f);
      std::fill(scratch_o.begin(), scratch_o.end(), 0.0f);
      return negative_sampling_forward_backward(scratch_h.data(), scratch_o.data(), e.h.data(), e.outputs.data(),
                                                targets, dim);
    };
    EXPECT_TRUE(testing::gradient_matches(loss, e.h.data(), dh.data(), dh.size(), 1e-2f, 2e-3, 2e-2))
        << "dh, targets " << targets << " dim " << dim;
    EXPECT_TRUE(testing::gradient_matches(loss, e.outputs.data(), dout.data(), dout.size(), 1e-2f, 2e-3, 2e-2))
        << "doutputs, targets " << targets << " dim " << dim;
  }
}

TEST(NegativeSampling, GradientsAccumulate) {
  Example e = example(4, 9, 5, 0.5f);
  std::vector<float> dh(9, 0.0f), dout(36, 0.0f), dh2(9, 1.0f), dout2(36, -2.0f);
  const double l1 = negative_sampling_forward_backward(dh.data(), dout.data(), e.h.data(), e.outputs.data(), 4, 9);
  const double l2 = negative_sampling_forward_backward(dh2.data(), dout2.data(), e.h.data(), e.outputs.data(), 4, 9);
  EXPECT_EQ(l1, l2);
  for (size_t i = 0; i < dh.size(); ++i) EXPECT_FLOAT_EQ(dh2[i], dh[i] + 1.0f);
  for (size_t i = 0; i < dout.size(); ++i) EXPECT_FLOAT_EQ(dout2[i], dout[i] - 2.0f);
}

TEST(NegativeSampling, LossIsFiniteForLargeScores) {
  // Scores of ±400: a naive log(σ) would give log(0) = -inf.
  std::vector<float> h{20.0f}, outputs{-20.0f, 20.0f};
  std::vector<float> dh{0.0f}, dout{0.0f, 0.0f};
  const double loss = negative_sampling_forward_backward(dh.data(), dout.data(), h.data(), outputs.data(), 2, 1);
  EXPECT_NEAR(loss, 800.0, 1e-6);
  EXPECT_NEAR(dh[0], 40.0f, 1e-4);  // (σ(-400) - 1)·(-20) + σ(400)·20
}

TEST(NegativeSampling, SgdStepIsMinusLrTimesTheGradient) {
  const int targets = 6, dim = 37;
  const float lr = 0.05f;
  Example e = example(targets, dim, 77, 0.4f);
  std::vector<float> dh(dim, 0.0f), dout(e.outputs.size(), 0.0f);
  negative_sampling_forward_backward(dh.data(), dout.data(), e.h.data(), e.outputs.data(), targets, dim);
  std::vector<float> updated = e.outputs, dh_acc(dim, 0.0f);
  std::vector<float*> rows;
  for (int j = 0; j < targets; ++j) rows.push_back(updated.data() + static_cast<size_t>(j) * dim);
  negative_sampling_sgd(dh_acc.data(), rows.data(), e.h.data(), targets, dim, lr);
  for (int i = 0; i < dim; ++i) EXPECT_NEAR(dh_acc[i], -lr * dh[i], 1e-6) << i;
  for (size_t i = 0; i < updated.size(); ++i) EXPECT_NEAR(updated[i], e.outputs[i] - lr * dout[i], 1e-6) << i;
}

TEST(NegativeSampling, MatchesPyTorch) {
  std::vector<SafetensorsEntry> entries;
  std::vector<std::unique_ptr<Example>> cases;
  std::vector<std::string> names;
  const std::vector<std::tuple<int, int, float>> sizes{{6, 100, 0.3f}, {1, 5, 1.0f}, {16, 13, 2.0f}, {2, 300, 0.1f}};
  for (size_t c = 0; c < sizes.size(); ++c) {
    const auto [targets, dim, scale] = sizes[c];
    cases.push_back(std::make_unique<Example>(example(targets, dim, 900 + c, scale)));
    names.push_back("case" + std::to_string(c));
    entries.push_back({names.back() + ".h", Dtype::F32, {dim}, cases.back()->h.data()});
    entries.push_back({names.back() + ".outputs", Dtype::F32, {targets, dim}, cases.back()->outputs.data()});
  }
  const testing::TempDir dir("negative_sampling_torch");
  write_safetensors(dir / "inputs.safetensors", entries);
  const int rc = testing::run_python("tests/torch/negative_sampling_reference.py",
                                     {(dir / "inputs.safetensors").string(), (dir / "reference.safetensors").string()});
  ASSERT_EQ(rc, 0) << "tests/torch/negative_sampling_reference.py failed; torch is required: run scripts/setup.sh --all";
  const SafetensorsFile ref(dir / "reference.safetensors");
  testing::DiffReport report("negative_sampling", 1e-10);
  for (size_t c = 0; c < cases.size(); ++c) {
    const Example& e = *cases[c];
    std::vector<float> dh(e.h.size(), 0.0f), dout(e.outputs.size(), 0.0f);
    const float loss = static_cast<float>(
        negative_sampling_forward_backward(dh.data(), dout.data(), e.h.data(), e.outputs.data(), e.targets, e.dim));
    report.add(names[c] + ".loss", std::vector<float>{loss}, testing::f32_vector(ref, names[c] + ".loss"));
    report.add(names[c] + ".dh", dh, testing::f32_vector(ref, names[c] + ".dh"));
    report.add(names[c] + ".doutputs", dout, testing::f32_vector(ref, names[c] + ".doutputs"));
  }
  report.check();
}

}  // namespace
}  // namespace potop
