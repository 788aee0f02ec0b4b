#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/activation.h"
#include "support/testing.h"
#include "unit/kernels/kernel_testing.h"

namespace potop {
namespace {

using testing::added;
using testing::gradient_matches;
using testing::random_vector;
using testing::weighted_sum;

// Inputs over the interesting range of GELU: a ramp from -8 to 8 plus random values.
std::vector<float> gelu_inputs(size_t n_ramp, size_t n_random) {
  std::vector<float> x = random_vector(n_random, 1, 2.0f);
  for (size_t i = 0; i < n_ramp; ++i) x.push_back(-8.0f + 16.0f * i / (n_ramp - 1));
  return x;
}

// 0.5 x (1 + tanh u) written as x σ(2u), which keeps its digits in the far negative tail even in
// double (where 1 + tanh u would round to 0).
double gelu_ref(double x) {
  const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
  return x / (1.0 + std::exp(-2.0 * u));
}

// Largest |a - ref| / (|ref| + floor).
double max_rel_error(const std::vector<float>& a, const std::vector<double>& ref, double floor) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - ref[i]) / (std::fabs(ref[i]) + floor));
  return worst;
}

// Each non-linearity's four kernels, for the tests that hold for all of them.
struct Kind {
  const char* name;
  void (*forward)(float*, const float*, size_t);
  void (*backward)(float*, const float*, const float*, size_t, GradStore);
  void (*bias_forward)(float*, float*, const float*, int, int);
  void (*bias_backward)(float*, float*, const float*, const float*, int, int, GradStore);
};
const std::vector<Kind>& kinds() {
  static const std::vector<Kind> k = {
      {"gelu", gelu_forward, gelu_backward, bias_gelu_forward, bias_gelu_backward},
      {"gelu_erf", gelu_erf_forward, gelu_erf_backward, bias_gelu_erf_forward, bias_gelu_erf_backward},
      {"relu", relu_forward, relu_backward, bias_relu_forward, bias_relu_backward},
      {"tanh", tanh_forward, tanh_backward, bias_tanh_forward, bias_tanh_backward},
  };
  return k;
}

TEST(ActivationTest, GeluForwardMatchesReference) {
  const auto x = gelu_inputs(161, 1000);
  std::vector<float> out(x.size());
  gelu_forward(out.data(), x.data(), x.size());
  std::vector<double> ref(x.size());
  for (size_t i = 0; i < x.size(); ++i) ref[i] = gelu_ref(x[i]);
  EXPECT_LT(testing::nmse(out.data(), ref.data(), x.size()), 1e-12);
  EXPECT_LT(testing::max_abs_diff(out.data(), ref.data(), x.size()), 2e-6);
  // Relative accuracy holds in the tail too (gelu(-8) ≈ -3e-21, where 1 + tanh u would round to
  // 0 in float); its size there is set by the rounding of u itself, |u| · 2^-23.
  EXPECT_LT(max_rel_error(out, ref, 1e-30), 1e-5);
  EXPECT_EQ(out[1000 + 80], 0.0f);                  // x = 0
  // The reference against torch.nn.functional.gelu(x, approximate="tanh") and the tanh form.
  EXPECT_NEAR(gelu_ref(1.0), 0.8411920070648193, 1e-7);
  EXPECT_NEAR(gelu_ref(-0.5), 0.5 * -0.5 * (1 + std::tanh(std::sqrt(2 / M_PI) * (-0.5 - 0.044715 / 8))), 1e-15);
  // Extremes stay finite: x for large x, (-)0 for very negative x.
  const std::vector<float> extreme = {-1e30f, -100.0f, 100.0f, 1e30f};
  std::vector<float> extreme_out(4);
  gelu_forward(extreme_out.data(), extreme.data(), 4);
  EXPECT_EQ(extreme_out[0], 0.0f);
  EXPECT_EQ(extreme_out[1], 0.0f);
  EXPECT_EQ(extreme_out[2], 100.0f);
  EXPECT_EQ(extreme_out[3], 1e30f);

  // In place.
  auto y = x;
  gelu_forward(y.data(), y.data(), y.size());
  EXPECT_EQ(y, out);
}

// x Φ(x) in double, as 0.5 x erfc(-x/√2): no cancellation in the negative tail.
double gelu_erf_ref(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double gelu_erf_grad_ref(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0)) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
}

TEST(ActivationTest, GeluErfForwardMatchesReference) {
  const auto x = gelu_inputs(161, 1000);
  std::vector<float> out(x.size());
  gelu_erf_forward(out.data(), x.data(), x.size());
  std::vector<double> ref(x.size());
  for (size_t i = 0; i < x.size(); ++i) ref[i] = gelu_erf_ref(x[i]);
  EXPECT_LT(testing::max_abs_diff(out.data(), ref.data(), x.size()), 1e-6);
  // Relative accuracy in the tail too (gelu_erf(-8) ≈ -5e-15, where 1 + erf would round to 0).
  EXPECT_LT(max_rel_error(out, ref, 1e-30), 1e-5);
  EXPECT_EQ(out[1000 + 80], 0.0f);  // x = 0
  // torch.nn.functional.gelu(torch.tensor(1.0, dtype=torch.float64)) and at -0.5: not the tanh form.
  EXPECT_NEAR(gelu_erf_ref(1.0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(gelu_erf_ref(-0.5), -0.15426876936299347, 1e-15);
  const std::vector<float> extreme = {-1e30f, -100.0f, 100.0f, 1e30f};
  std::vector<float> extreme_out(4);
  gelu_erf_forward(extreme_out.data(), extreme.data(), 4);
  EXPECT_EQ(extreme_out[0], 0.0f);
  EXPECT_EQ(extreme_out[1], 0.0f);
  EXPECT_EQ(extreme_out[2], 100.0f);
  EXPECT_EQ(extreme_out[3], 1e30f);
  auto y = x;  // in place
  gelu_erf_forward(y.data(), y.data(), y.size());
  EXPECT_EQ(y, out);
}

// Both GELUs' backward: by finite differences (accumulating onto what dinp held), and over a
// ramp against the derivative in double (the tanh form's by central differences of its reference).
TEST(ActivationTest, GeluAndTanhBackwardsMatchFiniteDifferencesAndAccumulate) {
  struct Case {
    const char* name;
    void (*forward)(float*, const float*, size_t);
    void (*backward)(float*, const float*, const float*, size_t, GradStore);
    double (*grad_ref)(double);
  };
  const Case cases[] = {
      {"gelu", gelu_forward, gelu_backward, [](double x) { return (gelu_ref(x + 1e-6) - gelu_ref(x - 1e-6)) / 2e-6; }},
      {"gelu_erf", gelu_erf_forward, gelu_erf_backward, gelu_erf_grad_ref},
      {"tanh", tanh_forward, tanh_backward, [](double x) { return 1.0 - std::tanh(x) * std::tanh(x); }},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    for (const size_t n : {size_t{1}, size_t{17}, size_t{37}}) {
      auto x = gelu_inputs(0, n);
      x[0] = 0.0f;
      auto dout = random_vector(n, 2);
      std::vector<float> out(n);
      auto loss = [&] {
        k.forward(out.data(), x.data(), n);
        return weighted_sum(out.data(), dout.data(), n);
      };
      const auto dinp0 = random_vector(n, 3);
      auto dinp = dinp0;
      k.backward(dinp.data(), dout.data(), x.data(), n, GradStore::kAccumulate);
      EXPECT_TRUE(gradient_matches(loss, x.data(), added(dinp, dinp0).data(), n, 1e-3f, 1e-3, 1e-3)) << "n=" << n;
    }
    const auto x = gelu_inputs(161, 0);
    std::vector<float> ones(x.size(), 1.0f), dinp(x.size(), 0.0f);
    k.backward(dinp.data(), ones.data(), x.data(), x.size(), GradStore::kAccumulate);
    std::vector<double> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) ref[i] = k.grad_ref(x[i]);
    EXPECT_LT(testing::max_abs_diff(dinp.data(), ref.data(), x.size()), 1e-6);
    EXPECT_LT(max_rel_error(dinp, ref, 1e-6), 1e-5);
  }
}

TEST(ActivationTest, ReluForwardAndBackward) {
  const size_t n = 33;
  auto x = random_vector(n, 4);
  for (auto& v : x) v += v > 0 ? 0.1f : -0.1f;  // keep clear of the kink for finite differences
  std::vector<float> out(n);
  relu_forward(out.data(), x.data(), n);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(out[i], x[i] > 0 ? x[i] : 0.0f);

  auto dout = random_vector(n, 5);
  auto loss = [&] {
    relu_forward(out.data(), x.data(), n);
    return weighted_sum(out.data(), dout.data(), n);
  };
  const auto dinp0 = random_vector(n, 6);
  auto dinp = dinp0;
  relu_backward(dinp.data(), dout.data(), x.data(), n);
  EXPECT_TRUE(gradient_matches(loss, x.data(), added(dinp, dinp0).data(), n, 1e-2f, 1e-4, 1e-4));

  auto y = x;
  relu_forward(y.data(), y.data(), n);
  relu_forward(out.data(), x.data(), n);
  EXPECT_EQ(y, out);
}

TEST(ActivationTest, LargeInputsRunInParallel) {
  // Over the parallel threshold: the result must equal a serial evaluation element for element.
  const size_t n = 50001;
  const auto x = random_vector(n, 7, 3.0f), dout = random_vector(n, 8);
  auto run = [&](int threads) {
    testing::ScopedThreads scope(threads);
    std::vector<float> out(2 * n, 0.0f);
    gelu_forward(out.data(), x.data(), n);
    gelu_backward(out.data() + n, dout.data(), x.data(), n);
    return out;
  };
  EXPECT_TRUE(testing::bitwise_equal(run(1), run(2)));
}

TEST(ActivationTest, BackwardOverwriteInPlace) {
  // GradStore::kOverwrite: dinp = dout ⊙ f'(x) whatever dinp held, and dinp may be dout itself
  // (the model turns d(act) into d(fch) in one buffer). The values of accumulating onto zeros
  // (GradStoreBothWays below checks the bits).
  const size_t n = 1037;
  const auto x = random_vector(n, 9, 4.0f), dout = random_vector(n, 10);
  for (const Kind& k : kinds()) {
    SCOPED_TRACE(k.name);
    auto backward = k.backward;
    std::vector<float> ref(n, 0.0f), set(n, std::nanf("")), inplace = dout;
    backward(ref.data(), dout.data(), x.data(), n, GradStore::kAccumulate);
    backward(set.data(), dout.data(), x.data(), n, GradStore::kOverwrite);
    backward(inplace.data(), inplace.data(), x.data(), n, GradStore::kOverwrite);
    for (size_t i = 0; i < n; ++i) ASSERT_NEAR(set[i], ref[i], 1e-6 * std::fabs(ref[i]) + 1e-30) << "element " << i;
    EXPECT_TRUE(testing::bitwise_equal(inplace, set));
  }
}

TEST(ActivationTest, BiasActivationIsBiasThenActivation) {
  // bias_*_forward: pre += bias, out = f(pre), exactly as the separate steps. bias_*_backward (its
  // default store is kOverwrite): dpre as the GradStore::kOverwrite backward (in place too), dbias
  // the column sums of dpre, the same for one and two threads.
  for (const Kind& k : kinds()) {
    for (auto [N, OC] : {std::pair{1, 1}, std::pair{7, 13}, std::pair{67, 40}, std::pair{300, 200}}) {
      SCOPED_TRACE(std::string(k.name) + " N=" + std::to_string(N) + " OC=" + std::to_string(OC));
      const size_t n = size_t(N) * OC;
      const auto x = random_vector(n, 21, 4.0f), bias = random_vector(OC, 22), dout = random_vector(n, 23);
      std::vector<float> sum(n), ref(n);
      for (size_t i = 0; i < n; ++i) sum[i] = x[i] + bias[i % OC];
      k.forward(ref.data(), sum.data(), n);
      std::vector<float> pre = x, out(n);
      k.bias_forward(out.data(), pre.data(), bias.data(), N, OC);
      EXPECT_TRUE(testing::bitwise_equal(pre, sum));
      EXPECT_TRUE(testing::bitwise_equal(out, ref));

      std::vector<float> dref(n);
      k.backward(dref.data(), dout.data(), sum.data(), n, GradStore::kOverwrite);
      auto run = [&](int threads) {
        testing::ScopedThreads scope(threads);
        std::vector<float> d = dout, db(OC, 0.5f);
        k.bias_backward(d.data(), db.data(), d.data(), sum.data(), N, OC, GradStore::kOverwrite);
        return std::pair{d, db};
      };
      const auto [d1, db1] = run(1);
      const auto [d2, db2] = run(2);
      EXPECT_TRUE(testing::bitwise_equal(d1, dref));
      EXPECT_TRUE(testing::bitwise_equal(db1, db2)) << "dbias depends on the thread count";
      std::vector<float> d_no_bias = dout;  // a layer without bias: no dbias, the same dpre
      k.bias_backward(d_no_bias.data(), nullptr, d_no_bias.data(), sum.data(), N, OC, GradStore::kOverwrite);
      EXPECT_TRUE(testing::bitwise_equal(d_no_bias, dref));
      for (int c = 0; c < OC; ++c) {
        double s = 0.5;
        for (int r = 0; r < N; ++r) s += dref[size_t(r) * OC + c];
        EXPECT_NEAR(db1[c], s, 1e-5 * (1.0 + std::fabs(s))) << "dbias[" << c << "]";
      }
    }
  }
}

TEST(ActivationTest, GradStoreBothWays) {
  // kAccumulate adds onto what dinp held, kOverwrite ignores it (kernel_testing.h), for every size
  // class: a scalar tail, several vectors, and the parallel loops.
  for (const size_t n : {size_t{1}, size_t{37}, size_t{50001}}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const auto x = random_vector(n, 31, 4.0f), dout = random_vector(n, 32);
    for (const Kind& k : kinds())
      EXPECT_TRUE(testing::stores_as_grad_store_says({n}, 1, [&](GradStore store, const std::vector<float*>& g) {
        k.backward(g[0], dout.data(), x.data(), n, store);
      })) << k.name;
  }
  // The bias-activation backward: dpre by the store, dbias (a parameter gradient) always summed into.
  for (auto [N, OC] : {std::pair{1, 1}, std::pair{7, 13}, std::pair{300, 200}}) {
    SCOPED_TRACE("N=" + std::to_string(N) + " OC=" + std::to_string(OC));
    const size_t n = size_t(N) * OC;
    const auto pre = random_vector(n, 33, 4.0f), dout = random_vector(n, 34);
    for (const Kind& k : kinds())
      EXPECT_TRUE(testing::stores_as_grad_store_says({n, size_t(OC)}, 1, [&](GradStore store, const std::vector<float*>& g) {
        k.bias_backward(g[0], g[1], dout.data(), pre.data(), N, OC, store);
      })) << "bias " << k.name;
    // Their default store is kAccumulate, as everywhere: onto zeros it gives kOverwrite's values
    // (up to the sign of a zero).
    std::vector<float> by_default(n, 0.0f), set(n, std::nanf(""));
    bias_gelu_backward(by_default.data(), nullptr, dout.data(), pre.data(), N, OC);
    bias_gelu_backward(set.data(), nullptr, dout.data(), pre.data(), N, OC, GradStore::kOverwrite);
    EXPECT_EQ(by_default, set);
    std::fill(by_default.begin(), by_default.end(), 0.0f);
    bias_relu_backward(by_default.data(), nullptr, dout.data(), pre.data(), N, OC);
    bias_relu_backward(set.data(), nullptr, dout.data(), pre.data(), N, OC, GradStore::kOverwrite);
    EXPECT_EQ(by_default, set);
  }
}

TEST(ActivationDeathTest, InPlaceOnlyWithOverwrite) {
  // dinp = dout is allowed with kOverwrite only: summing into dout while reading it is a caller bug.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const size_t n = 16;
  const auto x = random_vector(n, 35);
  std::vector<float> d = random_vector(n, 36);
  EXPECT_DEATH(gelu_backward(d.data(), d.data(), x.data(), n, GradStore::kAccumulate), "only as the same buffer");
  EXPECT_DEATH(relu_backward(d.data(), d.data(), x.data(), n, GradStore::kAccumulate), "only as the same buffer");
  EXPECT_DEATH(bias_gelu_backward(d.data(), nullptr, d.data(), x.data(), 4, 4, GradStore::kAccumulate),
               "only as the same buffer");
  EXPECT_DEATH(bias_relu_backward(d.data(), nullptr, d.data(), x.data(), 4, 4, GradStore::kAccumulate),
               "only as the same buffer");
  // A partial overlap is a bug with either store.
  EXPECT_DEATH(gelu_backward(d.data() + 1, d.data(), x.data(), n - 1, GradStore::kOverwrite), "only as the same buffer");
  EXPECT_DEATH(bias_relu_backward(d.data() + 4, nullptr, d.data(), x.data(), 3, 4, GradStore::kOverwrite),
               "only as the same buffer");
}

}  // namespace
}  // namespace potop
