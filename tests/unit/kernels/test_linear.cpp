#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/linear.h"
#include "support/testing.h"
#include "unit/kernels/kernel_testing.h"

namespace potop::test_linear {
namespace {

using testing::added;
using testing::gradient_matches;
using testing::random_vector;
using testing::weighted_sum;

// W[c][o] whatever the layout.
float weight_at(const std::vector<float>& w, int c, int o, int C, int OC, WeightLayout layout) {
  return layout == WeightLayout::kInOut ? w[static_cast<size_t>(c) * OC + o] : w[static_cast<size_t>(o) * C + c];
}

struct Case {
  int N, C, OC;
};
const Case kCases[] = {{1, 1, 1}, {5, 3, 17}, {7, 33, 9}, {3, 16, 8}};
const WeightLayout kLayouts[] = {WeightLayout::kInOut, WeightLayout::kOutIn};

std::string describe(const Case& c, WeightLayout layout, bool bias) {
  return "N=" + std::to_string(c.N) + " C=" + std::to_string(c.C) + " OC=" + std::to_string(c.OC) +
         (layout == WeightLayout::kInOut ? " (in, out)" : " (out, in)") + (bias ? " bias" : " no bias");
}

TEST(LinearTest, ForwardMatchesReference) {
  for (const Case& k : kCases) {
    for (WeightLayout layout : kLayouts) {
      for (bool use_bias : {true, false}) {
        SCOPED_TRACE(describe(k, layout, use_bias));
        auto inp = random_vector(static_cast<size_t>(k.N) * k.C, 1);
        auto w = random_vector(static_cast<size_t>(k.C) * k.OC, 2);
        auto b = random_vector(k.OC, 3);
        std::vector<float> out(static_cast<size_t>(k.N) * k.OC, 123.0f);  // garbage: forward overwrites
        linear_forward(out.data(), inp.data(), w.data(), use_bias ? b.data() : nullptr, k.N, k.C, k.OC, layout);
        std::vector<double> ref(out.size());
        for (int n = 0; n < k.N; ++n) {
          for (int o = 0; o < k.OC; ++o) {
            double s = use_bias ? b[o] : 0.0;
            for (int c = 0; c < k.C; ++c) {
              s += static_cast<double>(inp[static_cast<size_t>(n) * k.C + c]) * weight_at(w, c, o, k.C, k.OC, layout);
            }
            ref[static_cast<size_t>(n) * k.OC + o] = s;
          }
        }
        EXPECT_LT(testing::nmse(out.data(), ref.data(), out.size()), 1e-12);
        EXPECT_LT(testing::max_abs_diff(out.data(), ref.data(), out.size()), 1e-4);
      }
    }
  }
}

TEST(LinearTest, BackwardMatchesFiniteDifferencesAndAccumulates) {
  for (const Case& k : kCases) {
    for (WeightLayout layout : kLayouts) {
      SCOPED_TRACE(describe(k, layout, true));
      const size_t n_in = static_cast<size_t>(k.N) * k.C, n_out = static_cast<size_t>(k.N) * k.OC;
      auto inp = random_vector(n_in, 11);
      auto w = random_vector(static_cast<size_t>(k.C) * k.OC, 12);
      auto b = random_vector(k.OC, 13);
      auto dout = random_vector(n_out, 14);  // L = Σ dout ⊙ out
      std::vector<float> out(n_out);
      auto loss = [&] {
        linear_forward(out.data(), inp.data(), w.data(), b.data(), k.N, k.C, k.OC, layout);
        return weighted_sum(out.data(), dout.data(), n_out);
      };
      // Pre-filled gradients: the backward must add to them.
      const auto dinp0 = random_vector(n_in, 15), dw0 = random_vector(w.size(), 16), db0 = random_vector(k.OC, 17);
      auto dinp = dinp0, dw = dw0, db = db0;
      linear_backward(dinp.data(), dw.data(), db.data(), dout.data(), inp.data(), w.data(), k.N, k.C, k.OC, layout);
      // L is linear in each argument, so the differences are exact up to float rounding.
      EXPECT_TRUE(gradient_matches(loss, inp.data(), added(dinp, dinp0).data(), n_in, 1e-2f, 2e-3, 1e-3));
      EXPECT_TRUE(gradient_matches(loss, w.data(), added(dw, dw0).data(), w.size(), 1e-2f, 2e-3, 1e-3));
      EXPECT_TRUE(gradient_matches(loss, b.data(), added(db, db0).data(), b.size(), 1e-2f, 2e-3, 1e-3));
    }
  }
}

TEST(LinearTest, BackwardWithoutOptionalGradients) {
  const int N = 4, C = 5, OC = 3;
  for (WeightLayout layout : kLayouts) {
    auto inp = random_vector(N * C, 21), w = random_vector(C * OC, 22), dout = random_vector(N * OC, 23);
    std::vector<float> dw_all(C * OC, 0.0f), dw_only(C * OC, 0.0f), dinp(N * C, 0.0f), db(OC, 0.0f);
    linear_backward(dinp.data(), dw_all.data(), db.data(), dout.data(), inp.data(), w.data(), N, C, OC, layout);
    linear_backward(nullptr, dw_only.data(), nullptr, dout.data(), inp.data(), w.data(), N, C, OC, layout);
    EXPECT_EQ(dw_all, dw_only);
  }
}

TEST(LinearTest, BackwardOverwriteIgnoresWhatDinpHeld) {
  // GradStore::kOverwrite writes dout · Wᵀ over garbage (NaN included), the same values as
  // accumulating onto zeros; the weight and bias gradients still accumulate.
  for (WeightLayout layout : kLayouts) {
    for (const Case& k : kCases) {
      SCOPED_TRACE(describe(k, layout, true));
      auto inp = random_vector(size_t(k.N) * k.C, 41), w = random_vector(size_t(k.C) * k.OC, 42);
      auto dout = random_vector(size_t(k.N) * k.OC, 43);
      std::vector<float> dinp_add(size_t(k.N) * k.C, 0.0f), dinp_set(dinp_add.size(), std::nanf(""));
      std::vector<float> dw_add(w.size(), 1.0f), dw_set(w.size(), 1.0f), db_add(k.OC, 2.0f), db_set(k.OC, 2.0f);
      linear_backward(dinp_add.data(), dw_add.data(), db_add.data(), dout.data(), inp.data(), w.data(), k.N, k.C, k.OC,
                      layout);
      linear_backward(dinp_set.data(), dw_set.data(), db_set.data(), dout.data(), inp.data(), w.data(), k.N, k.C, k.OC,
                      layout, GradStore::kOverwrite);
      EXPECT_TRUE(testing::bitwise_equal(dinp_add, dinp_set));
      EXPECT_TRUE(testing::bitwise_equal(dw_add, dw_set));
      EXPECT_TRUE(testing::bitwise_equal(db_add, db_set));
    }
  }
}

TEST(LinearTest, BackwardIsDeterministic) {
  // Large enough for the bias reduction and the GEMMs to run on several threads.
  const int N = 96, C = 40, OC = 300;
  auto inp = random_vector(N * C, 31), w = random_vector(C * OC, 32), dout = random_vector(N * OC, 33);
  auto run = [&](int threads) {
    testing::ScopedThreads scope(threads);
    std::vector<float> dinp(N * C, 0.0f), dw(C * OC, 0.0f), db(OC, 0.0f);
    linear_backward(dinp.data(), dw.data(), db.data(), dout.data(), inp.data(), w.data(), N, C, OC);
    std::vector<float> all = dinp;
    all.insert(all.end(), dw.begin(), dw.end());
    all.insert(all.end(), db.begin(), db.end());
    return std::make_pair(all, db);
  };
  const auto first = run(2), second = run(2), single = run(1);
  EXPECT_TRUE(testing::bitwise_equal(first.first, second.first));
  EXPECT_TRUE(testing::bitwise_equal(first.second, single.second)) << "dbias depends on the thread count";
}

TEST(LinearTest, BackwardGradStoreBothWays) {
  // dinp by the store (kernel_testing.h); dweight and dbias, parameter gradients, always summed into.
  for (WeightLayout layout : kLayouts) {
    for (const Case& k : {Case{1, 1, 1}, Case{7, 33, 9}, Case{96, 40, 300}}) {
      SCOPED_TRACE(describe(k, layout, true));
      const auto inp = random_vector(size_t(k.N) * k.C, 51), w = random_vector(size_t(k.C) * k.OC, 52),
                 dout = random_vector(size_t(k.N) * k.OC, 53);
      EXPECT_TRUE(testing::stores_as_grad_store_says(
          {size_t(k.N) * k.C, w.size(), size_t(k.OC)}, 1, [&](GradStore store, const std::vector<float*>& g) {
            linear_backward(g[0], g[1], g[2], dout.data(), inp.data(), w.data(), k.N, k.C, k.OC, layout, store);
          }));
    }
  }
}

}  // namespace
}  // namespace potop::test_linear
