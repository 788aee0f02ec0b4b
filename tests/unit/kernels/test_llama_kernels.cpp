// The Llama's own kernels (src/models/llama/): rotary position embeddings, RMSNorm (and the fused
// residual add + RMSNorm) and SwiGLU, each forward against a double-precision reference written
// here, each backward against central finite differences of L = Σ w ⊙ out (w random, L summed in
// double), with both GradStore modes, and the same bits for any thread count.
// test_torch_kernels.cpp checks the same kernels against PyTorch.
//
// What each would catch: RoPE turning the other way, pairing (2i, 2i+1) instead of (i, i + D/2),
// reading the wrong position or touching the V heads after the rotated ones; RMSNorm subtracting
// the mean, adding eps outside the root or to the sum instead of the mean; SwiGLU's gate and up
// swapped, or silu' missing its g σ (1 - σ) term.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "kernels/swiglu.h"
#include "support/testing.h"
#include "unit/kernels/kernel_testing.h"

namespace potop {
namespace {

using testing::added;
using testing::gradient_matches;
using testing::random_vector;
using testing::weighted_sum;

// Largest |a - ref| / (|ref| + floor).
double max_rel_error(const std::vector<float>& a, const std::vector<double>& ref, double floor) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - ref[i]) / (std::fabs(ref[i]) + floor));
  return worst;
}

// ---- RoPE ---------------------------------------------------------------------------------------

// Rows of `stride` floats with `heads` heads of D at their start and padding after them (where a
// fused [Q K V] row keeps its V heads), which the rotation must leave alone.
struct RopeProblem {
  int rows, stride, heads, D;
  std::vector<int> positions;
  float theta = 10000.0f;
  size_t size() const { return static_cast<size_t>(rows) * stride; }
  std::string describe() const {
    return "rows=" + std::to_string(rows) + " stride=" + std::to_string(stride) + " heads=" + std::to_string(heads) +
           " D=" + std::to_string(D) + " theta=" + std::to_string(theta);
  }
};

std::vector<RopeProblem> rope_problems() {
  return {
      {1, 2, 1, 2, {5}},                                      // one pair
      {7, 3 * 8 + 5, 3, 8, {0, 3, 1, 40, 7, 7, 12}},           // positions out of order, repeated
      {4, 2 * 6 + 6, 2, 6, {2, 9, 0, 31}, 500.0f},             // D/2 odd, another θ
      {5, 4 * 10, 4, 10, {60, 61, 62, 63, 64}, 1e6f},           // no padding, large θ
  };
}

// x rotated as rope.h says, in double with θ^(-2i/D) in double.
std::vector<double> rope_reference(const std::vector<float>& x, const RopeProblem& p, double sign = 1.0) {
  std::vector<double> out(x.begin(), x.end());
  const int half = p.D / 2;
  for (int r = 0; r < p.rows; ++r) {
    for (int h = 0; h < p.heads; ++h) {
      const size_t a = static_cast<size_t>(r) * p.stride + static_cast<size_t>(h) * p.D;
      for (int i = 0; i < half; ++i) {
        const double angle = p.positions[r] * std::pow(static_cast<double>(p.theta), -2.0 * i / p.D);
        const double c = std::cos(angle), s = sign * std::sin(angle);
        const double xi = x[a + i], yi = x[a + i + half];
        out[a + i] = xi * c - yi * s;
        out[a + i + half] = yi * c + xi * s;
      }
    }
  }
  return out;
}

TEST(RopeTest, FrequenciesAreHuggingFaces) {
  // inv_freq = 1 / θ^(2i/D): the first pair turns by the position itself, the last one slowest.
  for (int D : {2, 8, 10, 64}) {
    for (float theta : {10000.0f, 500.0f, 500000.0f}) {
      SCOPED_TRACE("D=" + std::to_string(D) + " theta=" + std::to_string(theta));
      const std::vector<float> f = rope_frequencies(D, theta);
      ASSERT_EQ(f.size(), size_t(D / 2));
      EXPECT_EQ(f[0], 1.0f);
      for (int i = 0; i < D / 2; ++i)
        EXPECT_NEAR(f[i], std::pow(double(theta), -2.0 * i / D), 1e-6 * std::pow(double(theta), -2.0 * i / D)) << i;
    }
  }
}

TEST(RopeTest, ForwardMatchesReferenceAndLeavesPaddingAlone) {
  for (const RopeProblem& p : rope_problems()) {
    SCOPED_TRACE(p.describe());
    const std::vector<float> x = random_vector(p.size(), 1, 2.0f);
    std::vector<float> out = x;
    rope_forward(out.data(), p.rows, p.stride, p.heads, p.D, p.positions.data(),
                 rope_frequencies(p.D, p.theta).data());
    // Angles up to 64 rad are rounded to float before their cosine (as torch does): ~4e-6 rad.
    EXPECT_LT(max_rel_error(out, rope_reference(x, p), 1.0), 2e-5);
    for (int r = 0; r < p.rows; ++r) {
      for (int c = p.heads * p.D; c < p.stride; ++c) {
        const size_t i = static_cast<size_t>(r) * p.stride + c;
        ASSERT_EQ(out[i], x[i]) << "padding row " << r << " column " << c << " changed";
      }
      // Each pair keeps its length (a rotation), and position 0 is no rotation at all.
      for (int h = 0; h < p.heads; ++h) {
        for (int i = 0; i < p.D / 2; ++i) {
          const size_t a = static_cast<size_t>(r) * p.stride + static_cast<size_t>(h) * p.D + i, b = a + p.D / 2;
          EXPECT_NEAR(std::hypot(out[a], out[b]), std::hypot(x[a], x[b]), 1e-5 * (1 + std::hypot(x[a], x[b])));
          if (p.positions[r] == 0) {
            EXPECT_TRUE(out[a] == x[a] && out[b] == x[b]) << "position 0 rotated";
          }
        }
      }
    }
  }
}

TEST(RopeTest, ScoresDependOnlyOnHowFarApartTheyAre) {
  // q_m · k_n after the rotation is a function of m - n: the point of RoPE.
  const int D = 16;
  const auto f = rope_frequencies(D, 10000.0f);
  const auto q = random_vector(D, 3), k = random_vector(D, 4);
  auto score = [&](int m, int n) {
    std::vector<float> qm = q, kn = k;
    rope_forward(qm.data(), 1, D, 1, D, &m, f.data());
    rope_forward(kn.data(), 1, D, 1, D, &n, f.data());
    double s = 0;
    for (int i = 0; i < D; ++i) s += double(qm[i]) * kn[i];
    return s;
  };
  for (const auto& [m, n] : {std::pair{5, 2}, std::pair{2, 5}, std::pair{9, 9}, std::pair{30, 1}}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n));
    EXPECT_NEAR(score(m, n), score(m + 17, n + 17), 1e-4);
    EXPECT_NEAR(score(m, n), score(m + 100, n + 100), 1e-4);
  }
  EXPECT_GT(std::fabs(score(5, 2) - score(2, 5)), 1e-2) << "the scores should depend on the sign of m - n";
}

TEST(RopeTest, BackwardMatchesFiniteDifferences) {
  // L = Σ w ⊙ rope(x) is linear in x, so central differences are exact but for the rounding of
  // the float outputs; the padding's gradient is w itself.
  for (const RopeProblem& p : rope_problems()) {
    SCOPED_TRACE(p.describe());
    const size_t n = p.size();
    std::vector<float> x = random_vector(n, 5), w = random_vector(n, 6), out(n);
    const auto f = rope_frequencies(p.D, p.theta);
    auto loss = [&] {
      out = x;
      rope_forward(out.data(), p.rows, p.stride, p.heads, p.D, p.positions.data(), f.data());
      return weighted_sum(out.data(), w.data(), n);
    };
    std::vector<float> dx = w;  // in place: the rotated values' gradient in, the input's out
    rope_backward(dx.data(), p.rows, p.stride, p.heads, p.D, p.positions.data(), f.data());
    EXPECT_TRUE(gradient_matches(loss, x.data(), dx.data(), n, 1.0f / 64, 1e-4, 1e-4));
    // And against the reference's rotation by -angle.
    EXPECT_LT(max_rel_error(dx, rope_reference(w, p, -1.0), 1.0), 2e-5);
  }
}

TEST(RopeTest, BackwardUndoesForward) {
  // The rotation is orthogonal: its transpose, the backward pass, is its inverse.
  for (const RopeProblem& p : rope_problems()) {
    SCOPED_TRACE(p.describe());
    const auto x = random_vector(p.size(), 7);
    const auto f = rope_frequencies(p.D, p.theta);
    std::vector<float> y = x;
    rope_forward(y.data(), p.rows, p.stride, p.heads, p.D, p.positions.data(), f.data());
    rope_backward(y.data(), p.rows, p.stride, p.heads, p.D, p.positions.data(), f.data());
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y[i], x[i], 1e-6 * (1 + std::fabs(x[i]))) << i;
  }
}

TEST(RopeTest, SameResultForAnyThreadCount) {
  // Over the parallel threshold: 300 rows of 8 heads of 16, positions 0..99 three times.
  RopeProblem p{300, 8 * 16 + 16, 8, 16, {}};
  for (int r = 0; r < p.rows; ++r) p.positions.push_back(r % 100);
  const auto x = random_vector(p.size(), 8);
  const auto f = rope_frequencies(p.D, p.theta);
  auto run = [&](int threads, bool backward) {
    testing::ScopedThreads scope(threads);
    std::vector<float> y = x;
    (backward ? rope_backward : rope_forward)(y.data(), p.rows, p.stride, p.heads, p.D, p.positions.data(), f.data());
    return y;
  };
  for (bool backward : {false, true}) {
    const auto one = run(1, backward);
    EXPECT_TRUE(testing::bitwise_equal(one, run(2, backward))) << (backward ? "backward" : "forward");
    EXPECT_LT(max_rel_error(one, rope_reference(x, p, backward ? -1.0 : 1.0), 1.0), 1e-4);
  }
}

// ---- RMSNorm ------------------------------------------------------------------------------------

struct NormCase {
  int N, C;
};
const NormCase kNormCases[] = {{1, 1}, {1, 17}, {3, 3}, {5, 17}, {4, 33}, {2, 64}};

std::string describe(const NormCase& k) { return "N=" + std::to_string(k.N) + " C=" + std::to_string(k.C); }

TEST(RmsNormTest, ForwardMatchesReference) {
  const float eps = 1e-5f;
  for (const NormCase& k : {NormCase{1, 1}, NormCase{3, 3}, NormCase{5, 17}, NormCase{4, 33}, NormCase{2, 768}}) {
    SCOPED_TRACE(describe(k));
    const size_t n = static_cast<size_t>(k.N) * k.C;
    auto inp = random_vector(n, 1, 2.0f);
    for (float& x : inp) x += 3.0f;  // a mean far from 0: RMSNorm keeps it, LayerNorm would remove it
    // The last row so small that eps weighs: mean(x²) ≈ 1e-6 against eps = 1e-5.
    for (int c = 0; c < k.C; ++c) inp[n - k.C + c] *= 3e-4f;
    const auto w = random_vector(k.C, 2);
    std::vector<float> out(n), rstd(k.N);
    rmsnorm_forward(out.data(), rstd.data(), inp.data(), w.data(), k.N, k.C, eps);
    std::vector<double> ref(n), ref_rstd(k.N);
    for (int r = 0; r < k.N; ++r) {
      const float* x = inp.data() + static_cast<size_t>(r) * k.C;
      double ms = 0;
      for (int c = 0; c < k.C; ++c) ms += double(x[c]) * x[c];
      ref_rstd[r] = 1.0 / std::sqrt(ms / k.C + eps);
      for (int c = 0; c < k.C; ++c) ref[static_cast<size_t>(r) * k.C + c] = x[c] * ref_rstd[r] * w[c];
    }
    EXPECT_LT(testing::nmse(out.data(), ref.data(), n), 1e-12);
    EXPECT_LT(max_rel_error(rstd, ref_rstd, 0.0), 1e-6);
    EXPECT_LT(max_rel_error(out, ref, 1e-3), 1e-5);
  }
}

TEST(RmsNormTest, BackwardMatchesFiniteDifferencesAndAccumulates) {
  const float eps = 1e-5f;
  for (const NormCase& k : kNormCases) {
    SCOPED_TRACE(describe(k));
    const size_t n = static_cast<size_t>(k.N) * k.C;
    auto inp = random_vector(n, 11);
    for (float& x : inp) x += 0.5f;
    auto w = random_vector(k.C, 12);
    const auto dout = random_vector(n, 14);
    std::vector<float> out(n), rstd(k.N);
    auto loss = [&] {
      rmsnorm_forward(out.data(), rstd.data(), inp.data(), w.data(), k.N, k.C, eps);
      return weighted_sum(out.data(), dout.data(), n);
    };
    loss();  // rstd of the unperturbed input
    const auto saved_rstd = rstd;
    // Onto garbage (the default, kAccumulate): what the kernel added is the gradient.
    const auto dinp0 = random_vector(n, 15), dw0 = random_vector(k.C, 16);
    auto dinp = dinp0, dw = dw0;
    rmsnorm_backward(dinp.data(), dw.data(), dout.data(), inp.data(), w.data(), saved_rstd.data(), k.N, k.C);
    EXPECT_TRUE(gradient_matches(loss, inp.data(), added(dinp, dinp0).data(), n, 1e-3f, 5e-3, 1e-2));
    EXPECT_TRUE(gradient_matches(loss, w.data(), added(dw, dw0).data(), k.C, 1e-2f, 2e-3, 1e-3));
  }
}

TEST(RmsNormTest, ResidualRmsNormIsAddThenRmsNorm) {
  // The fused kernel gives exactly what the add followed by rmsnorm_forward gives, also in place
  // (res aliasing a, or b).
  for (const NormCase& k : kNormCases) {
    SCOPED_TRACE(describe(k));
    const size_t n = static_cast<size_t>(k.N) * k.C;
    const float eps = 1e-6f;
    const auto a = random_vector(n, 11, 2.0f), b = random_vector(n, 12), w = random_vector(k.C, 13);
    std::vector<float> sum(n), out(n), rstd(k.N);
    for (size_t i = 0; i < n; ++i) sum[i] = a[i] + b[i];
    rmsnorm_forward(out.data(), rstd.data(), sum.data(), w.data(), k.N, k.C, eps);
    std::vector<float> res(n), fused(n), frstd(k.N);
    residual_rmsnorm_forward(res.data(), fused.data(), frstd.data(), a.data(), b.data(), w.data(), k.N, k.C, eps);
    EXPECT_TRUE(testing::bitwise_equal(res, sum));
    EXPECT_TRUE(testing::bitwise_equal(fused, out));
    EXPECT_TRUE(testing::bitwise_equal(frstd, rstd));
    std::vector<float> in_a = a, in_b = b;
    residual_rmsnorm_forward(in_a.data(), fused.data(), frstd.data(), in_a.data(), b.data(), w.data(), k.N, k.C, eps);
    EXPECT_TRUE(testing::bitwise_equal(in_a, sum));
    EXPECT_TRUE(testing::bitwise_equal(fused, out));
    residual_rmsnorm_forward(in_b.data(), fused.data(), frstd.data(), a.data(), in_b.data(), w.data(), k.N, k.C, eps);
    EXPECT_TRUE(testing::bitwise_equal(in_b, sum));
    EXPECT_TRUE(testing::bitwise_equal(fused, out));
  }
}

TEST(RmsNormTest, BackwardGradStoreBothWays) {
  // dinp by the store (kernel_testing.h); dweight, a parameter gradient, always summed into. The
  // last case runs on several threads.
  for (const NormCase& k : {NormCase{1, 1}, NormCase{5, 17}, NormCase{64, 333}}) {
    SCOPED_TRACE(describe(k));
    const size_t n = static_cast<size_t>(k.N) * k.C;
    const auto inp = random_vector(n, 31), w = random_vector(k.C, 32), dout = random_vector(n, 34);
    std::vector<float> out(n), rstd(k.N);
    rmsnorm_forward(out.data(), rstd.data(), inp.data(), w.data(), k.N, k.C, 1e-5f);
    EXPECT_TRUE(testing::stores_as_grad_store_says({n, size_t(k.C)}, 1, [&](GradStore store, const std::vector<float*>& g) {
      rmsnorm_backward(g[0], g[1], dout.data(), inp.data(), w.data(), rstd.data(), k.N, k.C, store);
    }));
  }
}

TEST(RmsNormTest, SameResultForAnyThreadCount) {
  const int N = 64, C = 333;  // over the parallel threshold, C not a multiple of the vector width
  const size_t n = static_cast<size_t>(N) * C;
  const auto inp = random_vector(n, 21), w = random_vector(C, 22), dout = random_vector(n, 24);
  auto run = [&](int threads) {
    testing::ScopedThreads scope(threads);
    std::vector<float> all(2 * n + N + C, 0.0f);  // out, rstd, dinp, dweight
    float* out = all.data();
    float* rstd = out + n;
    rmsnorm_forward(out, rstd, inp.data(), w.data(), N, C, 1e-5f);
    rmsnorm_backward(rstd + N, rstd + N + n, dout.data(), inp.data(), w.data(), rstd, N, C);
    return all;
  };
  const auto two = run(2);
  EXPECT_TRUE(testing::bitwise_equal(two, run(2)));
  EXPECT_TRUE(testing::bitwise_equal(two, run(1)));
}

// ---- SwiGLU -------------------------------------------------------------------------------------

double silu(double g) { return g / (1.0 + std::exp(-g)); }

// (N, 2F) rows of [gate | up]: gates over a ramp from -20 to 20 (silu's saturated tails and its
// minimum near -1.28) and random values, ups random.
std::vector<float> gate_up_inputs(int N, int F, uint64_t seed) {
  auto gu = random_vector(size_t(N) * 2 * F, seed, 2.0f);
  for (int n = 0; n < N; ++n)
    for (int i = 0; i < F; i += 3) gu[size_t(n) * 2 * F + i] = -20.0f + 40.0f * float((n * F + i) % 97) / 96.0f;
  return gu;
}

TEST(SwiGluTest, ForwardMatchesReference) {
  for (const auto& [N, F] : {std::pair{1, 1}, std::pair{3, 7}, std::pair{5, 33}, std::pair{200, 100}}) {
    SCOPED_TRACE("N=" + std::to_string(N) + " F=" + std::to_string(F));
    const auto gu = gate_up_inputs(N, F, 1);
    std::vector<float> out(size_t(N) * F);
    swiglu_forward(out.data(), gu.data(), N, F);
    std::vector<double> ref(out.size());
    for (int n = 0; n < N; ++n)
      for (int i = 0; i < F; ++i)
        ref[size_t(n) * F + i] = silu(gu[size_t(n) * 2 * F + i]) * gu[size_t(n) * 2 * F + F + i];
    EXPECT_LT(max_rel_error(out, ref, 1e-6), 1e-5);
  }
}

TEST(SwiGluTest, BackwardMatchesFiniteDifferencesAndAccumulates) {
  for (const auto& [N, F] : {std::pair{1, 1}, std::pair{3, 7}, std::pair{4, 33}}) {
    SCOPED_TRACE("N=" + std::to_string(N) + " F=" + std::to_string(F));
    const size_t n = size_t(N) * F;
    auto gu = gate_up_inputs(N, F, 2);
    const auto dout = random_vector(n, 3);
    std::vector<float> out(n);
    auto loss = [&] {
      swiglu_forward(out.data(), gu.data(), N, F);
      return weighted_sum(out.data(), dout.data(), n);
    };
    const auto d0 = random_vector(2 * n, 4);
    auto d = d0;
    swiglu_backward(d.data(), dout.data(), gu.data(), N, F);
    EXPECT_TRUE(gradient_matches(loss, gu.data(), added(d, d0).data(), 2 * n, 1e-3f, 2e-3, 5e-3));
  }
}

TEST(SwiGluTest, GradStoreBothWays) {
  // dgate_up is an activation gradient: kAccumulate adds, kOverwrite ignores what it held; the
  // last case runs on several threads.
  for (const auto& [N, F] : {std::pair{1, 1}, std::pair{5, 17}, std::pair{200, 100}}) {
    SCOPED_TRACE("N=" + std::to_string(N) + " F=" + std::to_string(F));
    const auto gu = gate_up_inputs(N, F, 5);
    const auto dout = random_vector(size_t(N) * F, 6);
    EXPECT_TRUE(testing::stores_as_grad_store_says({size_t(N) * 2 * F}, 1, [&](GradStore store, const std::vector<float*>& g) {
      swiglu_backward(g[0], dout.data(), gu.data(), N, F, store);
    }));
  }
}

TEST(SwiGluTest, SameResultForAnyThreadCount) {
  const int N = 200, F = 101;  // over the parallel threshold
  const auto gu = gate_up_inputs(N, F, 7);
  const auto dout = random_vector(size_t(N) * F, 8);
  auto run = [&](int threads) {
    testing::ScopedThreads scope(threads);
    std::vector<float> all(size_t(N) * 3 * F);  // out, then dgate_up
    swiglu_forward(all.data(), gu.data(), N, F);
    swiglu_backward(all.data() + size_t(N) * F, dout.data(), gu.data(), N, F, GradStore::kOverwrite);
    return all;
  };
  const auto one = run(1);
  EXPECT_TRUE(testing::bitwise_equal(one, run(2)));
}

}  // namespace
}  // namespace potop
