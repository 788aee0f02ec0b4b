// The quantized formats against llama.cpp's semantics, and every kernel this CPU runs against a
// dequantize-then-float reference (kernels/quant.h).
#include <gtest/gtest.h>
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/quant.h"

namespace potop {
namespace {

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

TEST(QuantF16Test, KnownValuesAndRoundingToNearestEven) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_f16(0.1f), 0x2E66);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7BFF);  // the largest half
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7C00);  // halfway to the next: rounds to infinity (even)
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  const uint16_t nan = f32_to_f16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // a tie goes to the even neighbour
  EXPECT_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // ... here upwards
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -14)), 0x0400);             // the smallest normal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);             // the smallest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);             // half of it: a tie, to zero
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0001f, -25)), 0x0001);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.5f, -24)), 0x0002);  // 1.5 units: a tie, to 2
  EXPECT_EQ(f32_to_f16(std::ldexp(2.5f, -24)), 0x0002);  // 2.5 units: a tie, to 2
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)), 0x0400);  // tie between 0x3FF and 0x400
}

TEST(QuantF16Test, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE((h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0) << h;
      continue;
    }
    ASSERT_EQ(f32_to_f16(f), h) << "half 0x" << std::hex << h << " = " << f;
  }
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x7BFF), 65504.0f);
}

__attribute__((target("f16c"))) uint16_t hardware_f16(float x) {
  return static_cast<uint16_t>(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT));
}

// llama.cpp converts with F16C (vcvtps2ph) on x86: the same bits for every float tried.
TEST(QuantF16Test, MatchesF16C) {
  if (!quant_isa_available(QuantIsa::kAvx2)) GTEST_SKIP() << "no F16C";
  std::mt19937 rng(7);
  for (int i = 0; i < 2'000'000; ++i) {
    const float x = bits_to_float(static_cast<uint32_t>(rng()));
    if (std::isnan(x)) continue;
    ASSERT_EQ(f32_to_f16(x), hardware_f16(x)) << x;
  }
  for (int e = -30; e <= 17; ++e)  // every binade a half has, and beyond, with ties
    for (float m : {1.0f, 1.5f, 1.0009765625f, 1.00048828125f, 1.99951171875f, 1.999755859375f}) {
      const float x = std::ldexp(m, e);
      ASSERT_EQ(f32_to_f16(x), hardware_f16(x)) << x;
      ASSERT_EQ(f32_to_f16(-x), hardware_f16(-x)) << -x;
    }
}

TEST(QuantFormatTest, RowBytesAndTypes) {
  EXPECT_EQ(quant_row_bytes(QuantType::kQ8_0, 4096), 128u * 34u);  // 8.5 bits per weight
  EXPECT_EQ(quant_row_bytes(QuantType::kQ4_0, 4096), 128u * 18u);  // 4.5
  EXPECT_EQ(quant_row_bytes(QuantType::kF16, 37), 74u);
  EXPECT_FALSE(quant_row_fits(QuantType::kQ8_0, 33));
  EXPECT_TRUE(quant_row_fits(QuantType::kF16, 33));
  EXPECT_EQ(parse_quant_type("q4_0", "--type"), QuantType::kQ4_0);
  try {
    parse_quant_type("q3_k", "--type");
    FAIL() << "q3_k accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--type q3_k: expected f16, q8_0 or q4_0");
  }
}

// ggml's quantize_row_q8_0_ref: d = max|x| / 127, q = round(x / d), d stored as f16.
TEST(QuantFormatTest, Q8_0IsLlamaCpps) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = 0.25f * (j - 12);  // -3 .. 4.75
  BlockQ8_0 blk;
  quantize_row(QuantType::kQ8_0, x.data(), 32, &blk);
  const float d = 4.75f / 127.0f;
  EXPECT_EQ(blk.d, f32_to_f16(d));
  for (int j = 0; j < 32; ++j) EXPECT_EQ(blk.qs[j], static_cast<int8_t>(std::round(x[j] / d))) << j;
  EXPECT_EQ(blk.qs[31], 127);
  std::vector<float> back(32);
  dequantize_row(QuantType::kQ8_0, &blk, 32, back.data());
  for (int j = 0; j < 32; ++j) EXPECT_NEAR(back[j], x[j], 0.51f * d + 1e-3f * std::fabs(x[j])) << j;
}

// ggml's quantize_row_q4_0_ref: the weight of largest magnitude, signed, is -8 d; q = x/d + 8.5
// truncated and capped at 15; weight j in the low nibble of byte j, weight j + 16 in its high one.
TEST(QuantFormatTest, Q4_0IsLlamaCpps) {
  std::vector<float> x(32, 0.0f);
  x[0] = 8.0f, x[1] = -4.0f, x[2] = 3.2f, x[16] = -8.0f, x[17] = 1.0f;
  BlockQ4_0 blk;
  quantize_row(QuantType::kQ4_0, x.data(), 32, &blk);
  EXPECT_EQ(f16_to_f32(blk.d), -1.0f);  // max 8 (the first of the two of magnitude 8) over -8
  EXPECT_EQ(blk.qs[0], 0 | (15 << 4));  // 8 -> 0; -8 -> 16.5 capped at 15
  EXPECT_EQ(blk.qs[1], 12 | (7 << 4));  // -4 -> 12.5 -> 12; 1 -> 7.5 -> 7
  EXPECT_EQ(blk.qs[2] & 0x0F, 5);       // 3.2 -> 5.3 -> 5
  EXPECT_EQ(blk.qs[3], 8 | (8 << 4));   // zeros -> 8
  std::vector<float> back(32);
  dequantize_row(QuantType::kQ4_0, &blk, 32, back.data());
  EXPECT_EQ(back[0], 8.0f);
  EXPECT_EQ(back[1], -4.0f);
  EXPECT_EQ(back[2], 3.0f);
  EXPECT_EQ(back[16], -7.0f);  // the cap: -8 comes back as -7
  EXPECT_EQ(back[17], 1.0f);
  EXPECT_EQ(back[3], 0.0f);
}

TEST(QuantFormatTest, AZeroBlockHasScaleZero) {
  std::vector<float> x(64, 0.0f), back(64, 1.0f);
  for (QuantType t : {QuantType::kQ8_0, QuantType::kQ4_0}) {
    std::vector<unsigned char> row(quant_row_bytes(t, 64));
    quantize_row(t, x.data(), 64, row.data());
    dequantize_row(t, row.data(), 64, back.data());
    for (float v : back) EXPECT_EQ(v, 0.0f) << to_string(t);
  }
}

// The error of a round trip is at most half a step of the block's scale.
TEST(QuantFormatTest, RoundTripErrorIsHalfAStep) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  const int K = 4096;
  std::vector<float> x(K), back(K);
  for (float& v : x) v = normal(rng);
  for (QuantType t : {QuantType::kF16, QuantType::kQ8_0, QuantType::kQ4_0}) {
    std::vector<unsigned char> row(quant_row_bytes(t, K));
    quantize_row(t, x.data(), K, row.data());
    dequantize_row(t, row.data(), K, back.data());
    for (int b = 0; b < K / kQuantBlock; ++b) {
      float amax = 0.0f;
      for (int j = 0; j < kQuantBlock; ++j) amax = std::max(amax, std::fabs(x[b * kQuantBlock + j]));
      const float step = t == QuantType::kF16 ? amax * std::ldexp(1.0f, -10) : t == QuantType::kQ8_0 ? amax / 127 : amax / 8;
      for (int j = 0; j < kQuantBlock; ++j) {
        const int k = b * kQuantBlock + j;
        // q4_0 caps the far end of the range at 7 steps: that weight may be off by a whole step.
        // The scale itself is stored as f16, off by up to 2^-11 of it: up to amax·2^-11 more.
        ASSERT_LE(std::fabs(back[k] - x[k]), (t == QuantType::kQ4_0 ? 1.0f : 0.5f) * step + amax * std::ldexp(1.0f, -10) + 1e-7f)
            << to_string(t) << " weight " << k;
      }
    }
  }
}

// Σ w x in double over the dequantized weights: what every kernel must give, up to float rounding.
double reference_dot(QuantType t, const std::vector<unsigned char>& row, const std::vector<float>& x, int K,
                     double* magnitude) {
  std::vector<float> w(K);
  dequantize_row(t, row.data(), K, w.data());
  double s = 0.0, m = 0.0;
  for (int k = 0; k < K; ++k) s += static_cast<double>(w[k]) * x[k], m += std::fabs(static_cast<double>(w[k]) * x[k]);
  *magnitude = m;
  return s;
}

TEST(QuantKernelTest, EveryIsaMatchesTheDequantizedReference) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  int tried = 0;
  for (QuantIsa isa : {QuantIsa::kScalar, QuantIsa::kAvx2, QuantIsa::kAvx512}) {
    if (!quant_isa_available(isa)) continue;
    ++tried;
    for (QuantType t : {QuantType::kF16, QuantType::kQ8_0, QuantType::kQ4_0})
      for (int K : {32, 64, 96, 4096, 37, 8, 15}) {
        if (!quant_row_fits(t, K)) continue;
        std::vector<float> w(K), x(K);
        for (float& v : w) v = 0.02f * normal(rng);
        for (float& v : x) v = normal(rng);
        std::vector<unsigned char> row(quant_row_bytes(t, K));
        quantize_row(t, w.data(), K, row.data());
        double magnitude;
        const double want = reference_dot(t, row, x, K, &magnitude);
        const float got = quant_dot_with(isa, t, row.data(), x.data(), K);
        EXPECT_NEAR(got, want, 2e-6 * magnitude + 1e-7)
            << to_string(t) << " K " << K << " isa " << static_cast<int>(isa);
      }
  }
  EXPECT_GE(tried, 1);
}

TEST(QuantKernelTest, GemvIsOneDotPerRow) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int N = 300, K = 256;  // enough weights for the parallel path
  std::vector<float> W(static_cast<size_t>(N) * K), x(K), y(N);
  for (float& v : W) v = 0.05f * normal(rng);
  for (float& v : x) v = normal(rng);
  for (QuantType t : {QuantType::kF16, QuantType::kQ8_0, QuantType::kQ4_0}) {
    const size_t rb = quant_row_bytes(t, K);
    std::vector<unsigned char> q(rb * N);
    for (int n = 0; n < N; ++n) quantize_row(t, W.data() + static_cast<size_t>(n) * K, K, q.data() + n * rb);
    quant_gemv(t, q.data(), N, K, x.data(), y.data());
    for (int n = 0; n < N; ++n) ASSERT_EQ(y[n], quant_dot(t, q.data() + n * rb, x.data(), K)) << to_string(t) << " row " << n;
  }
}

}  // namespace
}  // namespace potop
