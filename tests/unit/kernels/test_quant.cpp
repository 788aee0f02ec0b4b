// The quantized formats against llama.cpp's semantics, and every kernel this CPU runs against a
// dequantize-then-float reference (kernels/quant.h).
#include <gtest/gtest.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <bit>
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

// A KV cache of type f16 converts whole rows (floats_to_halves, halves_to_floats: F16C where the
// CPU has it, 8 at a time, the rest one by one): the bits of f32_to_f16 and f16_to_f32, but that
// a NaN stays a NaN of its sign without its payload kept canonical.
TEST(QuantF16Test, RowConversionsAreTheScalarOnes) {
  std::mt19937 rng(11);
  std::vector<float> x(100'003);  // not a multiple of 8: the tail takes the scalar path
  for (float& f : x) f = bits_to_float(static_cast<uint32_t>(rng()));
  const float specials[] = {0.0f, -0.0f, 65504.0f, 65520.0f, 1e6f, std::ldexp(1.0f, -24), std::ldexp(1.5f, -24),
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  std::copy(std::begin(specials), std::end(specials), x.begin());
  std::vector<uint16_t> h(x.size());
  floats_to_halves(x.data(), static_cast<int>(x.size()), h.data());
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      const bool nan = (h[i] & 0x7C00) == 0x7C00 && (h[i] & 0x3FF) != 0;
      ASSERT_TRUE(nan && static_cast<bool>(h[i] >> 15) == std::signbit(x[i])) << i;
      continue;
    }
    ASSERT_EQ(h[i], f32_to_f16(x[i])) << "x[" << i << "] = " << x[i];
  }
  std::vector<uint16_t> every(0x10000 + 3);
  for (size_t i = 0; i < every.size(); ++i) every[i] = static_cast<uint16_t>(i);
  std::vector<float> back(every.size());
  halves_to_floats(every.data(), static_cast<int>(every.size()), back.data());
  for (size_t i = 0; i < every.size(); ++i) {
    const float want = f16_to_f32(every[i]);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(back[i])) << i;
      continue;
    }
    ASSERT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(want)) << "half 0x" << std::hex << every[i];
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

constexpr QuantIsa kIsas[] = {QuantIsa::kScalar, QuantIsa::kAvx2, QuantIsa::kAvx512, QuantIsa::kAvx512Vnni};
constexpr QuantType kTypes[] = {QuantType::kF16, QuantType::kQ8_0, QuantType::kQ4_0};

std::string isa_name(QuantIsa isa) {
  const char* names[] = {"scalar", "avx2", "avx512", "avx512vnni"};
  return names[static_cast<int>(isa)];
}

// x as the integer kernels see it: quantized by quantize_activations and back.
std::vector<float> requantized(const float* x, int K) {
  std::vector<int8_t> q(K);
  std::vector<float> d(K / kQuantBlock), back(K);
  std::vector<int32_t> sum(K / kQuantBlock);
  quantize_activations(x, K, q.data(), d.data(), sum.data());
  for (int k = 0; k < K; ++k) back[k] = d[k / kQuantBlock] * q[k];
  return back;
}

// The bound of a q8_0 / q4_0 kernel against Σ w x in double: the activations' rounding, at most
// half a step (d_x / 2 = max|x_block| / 254) per element times |w|, plus float rounding (2e-6 of
// Σ |w x|, far above K · 2^-24 for these K but below any real error).
struct Bound {
  double want, tolerance;
};
Bound reference(QuantType t, const unsigned char* row, const float* x, int K) {
  std::vector<float> w(K);
  dequantize_row(t, row, K, w.data());
  double s = 0.0, m = 0.0, act = 0.0;
  for (int k = 0; k < K; ++k) s += static_cast<double>(w[k]) * x[k], m += std::fabs(static_cast<double>(w[k]) * x[k]);
  if (t != QuantType::kF16)
    for (int b = 0; b < K / kQuantBlock; ++b) {
      double amax = 0.0, wsum = 0.0;
      for (int j = 0; j < kQuantBlock; ++j)
        amax = std::max(amax, std::fabs(static_cast<double>(x[b * kQuantBlock + j]))),
        wsum += std::fabs(static_cast<double>(w[b * kQuantBlock + j]));
      act += amax / 254.0 * (1.0 + 1e-6) * wsum;
    }
  return {s, act + 2e-6 * (m + act) + 1e-7};
}

TEST(QuantKernelTest, EveryIsaMatchesTheDequantizedReference) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  int tried = 0;
  for (QuantIsa isa : kIsas) {
    if (!quant_isa_available(isa)) continue;
    ++tried;
    for (QuantType t : kTypes)
      for (int K : {32, 64, 96, 288, 4096, 37, 8, 15}) {
        if (!quant_row_fits(t, K)) continue;
        std::vector<float> w(K), x(K);
        for (float& v : w) v = 0.02f * normal(rng);
        for (float& v : x) v = normal(rng);
        std::vector<unsigned char> row(quant_row_bytes(t, K));
        quantize_row(t, w.data(), K, row.data());
        const Bound ref = reference(t, row.data(), x.data(), K);
        const float got = quant_dot_with(isa, t, row.data(), x.data(), K);
        EXPECT_NEAR(got, ref.want, ref.tolerance) << to_string(t) << " K " << K << " isa " << isa_name(isa);
        if (t == QuantType::kF16) continue;
        // Against the requantized x the only error left is float rounding.
        const std::vector<float> xq = requantized(x.data(), K);
        double magnitude;
        const double exact = reference_dot(t, row, xq, K, &magnitude);
        EXPECT_NEAR(got, exact, 2e-6 * magnitude + 1e-7) << to_string(t) << " K " << K << " isa " << isa_name(isa);
      }
  }
  EXPECT_GE(tried, 1);
}

// llama.cpp's quantize_row_q8_0 for the activations, with an f32 scale: d = max|x| / 127,
// q = x · (127 / max|x|) to nearest even, and Σ q.
TEST(QuantKernelTest, ActivationsAreQuantizedAsLlamaCppDoes) {
  std::mt19937 rng(2);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const int K = 4096 + 64;
  std::vector<float> x(K);
  for (float& v : x) v = normal(rng);
  for (int j = 0; j < 32; ++j) x[j] = 0.0f;                   // an all-zero block
  for (int j = 0; j < 32; ++j) x[32 + j] = 0.5f * (j - 10);   // ties: 127 / 10.5 · 0.5 k
  x[64] = 127.0f, x[65] = 0.5f, x[66] = 1.5f, x[67] = -2.5f;  // scale 1: exact ties to even
  std::vector<int8_t> q(K);
  std::vector<float> d(K / 32);
  std::vector<int32_t> sum(K / 32);
  quantize_activations(x.data(), K, q.data(), d.data(), sum.data());
  for (int b = 0; b < K / 32; ++b) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
    ASSERT_EQ(d[b], amax / 127.0f) << b;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    int32_t s = 0;
    for (int j = 0; j < 32; ++j) {
      const int want = static_cast<int>(std::nearbyint(x[b * 32 + j] * id));
      ASSERT_EQ(q[b * 32 + j], want) << "block " << b << " element " << j;
      s += want;
    }
    ASSERT_EQ(sum[b], s) << b;
  }
  EXPECT_EQ(q[65], 0);  // 0.5 -> 0
  EXPECT_EQ(q[66], 2);  // 1.5 -> 2
  EXPECT_EQ(q[67], -2);  // -2.5 -> -2
  EXPECT_EQ(q[64], 127);
}

// The integer kernels against a scalar integer reference: the same sums, exactly, on every ISA.
TEST(QuantKernelTest, IntegerBlockSumsAreExactOnEveryIsa) {
  std::mt19937 rng(13);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int K = 32 * 19;  // an odd number of blocks: the 512-bit kernels' pairs and a lone block
  std::vector<float> w(K), x(K);
  for (float& v : w) v = normal(rng);
  for (float& v : x) v = normal(rng);
  for (int j = 0; j < 32; ++j) x[j] = j % 2 ? 100.0f : -100.0f;  // |q| = 127 throughout
  std::vector<int8_t> q(K);
  std::vector<float> d(K / 32);
  std::vector<int32_t> sum(K / 32);
  quantize_activations(x.data(), K, q.data(), d.data(), sum.data());
  for (QuantType t : {QuantType::kQ8_0, QuantType::kQ4_0}) {
    std::vector<unsigned char> row(quant_row_bytes(t, K));
    quantize_row(t, w.data(), K, row.data());
    if (t == QuantType::kQ8_0) {
      // The extremes: -128 (which llama.cpp's quantizer never makes, but a file may hold) and 127.
      auto* blk = reinterpret_cast<BlockQ8_0*>(row.data());
      for (int j = 0; j < 32; ++j) blk[0].qs[j] = static_cast<int8_t>(j % 2 ? -128 : 127);
    } else {
      auto* blk = reinterpret_cast<BlockQ4_0*>(row.data());
      for (int j = 0; j < 16; ++j) blk[0].qs[j] = static_cast<uint8_t>(j % 2 ? 0x0F : 0xF0);
    }
    std::vector<int32_t> want(K / 32);
    for (int b = 0; b < K / 32; ++b) {
      int32_t s = 0;
      for (int j = 0; j < 32; ++j) {
        int wq;
        if (t == QuantType::kQ8_0) {
          wq = reinterpret_cast<const BlockQ8_0*>(row.data())[b].qs[j];
        } else {
          const uint8_t byte = reinterpret_cast<const BlockQ4_0*>(row.data())[b].qs[j % 16];
          wq = (j < 16 ? byte & 0x0F : byte >> 4) - 8;
        }
        s += wq * q[b * 32 + j];
      }
      want[b] = s;
    }
    for (QuantIsa isa : kIsas) {
      if (!quant_isa_available(isa)) continue;
      std::vector<int32_t> got(K / 32, -1);
      quant_block_sums_with(isa, t, row.data(), q.data(), sum.data(), K, got.data());
      for (int b = 0; b < K / 32; ++b) ASSERT_EQ(got[b], want[b]) << to_string(t) << " " << isa_name(isa) << " block " << b;
    }
  }
}

// Random weights, N rows of K, quantized; `offset` bytes into the buffer (blocks of 34 and 18
// bytes sit at any alignment).
struct QuantMatrix {
  std::vector<unsigned char> bytes;
  size_t offset;
  const unsigned char* data() const { return bytes.data() + offset; }
};
QuantMatrix random_matrix(QuantType t, int N, int K, std::mt19937& rng, size_t offset) {
  std::normal_distribution<float> normal(0.0f, 0.05f);
  const size_t rb = quant_row_bytes(t, K);
  QuantMatrix q{std::vector<unsigned char>(rb * N + offset), offset};
  std::vector<float> w(K);
  for (int n = 0; n < N; ++n) {
    for (float& v : w) v = normal(rng);
    quantize_row(t, w.data(), K, q.bytes.data() + offset + n * rb);
  }
  return q;
}

TEST(QuantMatmulTest, EveryIsaMatchesTheDequantizedReference) {
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (QuantType t : kTypes)
    for (int K : {32, 96, 4096})
      for (int N : {1, 37}) {
        const QuantMatrix W = random_matrix(t, N, K, rng, 1);
        const size_t rb = quant_row_bytes(t, K);
        for (int M : {1, 2, 3, 7, 8, 9, 33}) {
          std::vector<float> X(static_cast<size_t>(M) * K), Y0(static_cast<size_t>(M) * N);
          for (float& v : X) v = normal(rng);
          for (float& v : Y0) v = normal(rng);
          std::vector<Bound> refs;
          for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) refs.push_back(reference(t, W.data() + n * rb, X.data() + static_cast<size_t>(m) * K, K));
          for (bool accumulate : {false, true})
            for (QuantIsa isa : kIsas) {
              if (!quant_isa_available(isa)) continue;
              std::vector<float> Y = Y0;
              quant_matmul_with(isa, t, W.data(), N, K, X.data(), M, Y.data(), accumulate);
              for (int m = 0; m < M; ++m)
                for (int n = 0; n < N; ++n) {
                  const Bound& ref = refs[m * N + n];
                  const double y0 = accumulate ? Y0[m * N + n] : 0.0;
                  ASSERT_NEAR(Y[m * N + n], y0 + ref.want, ref.tolerance + 1e-7 * std::fabs(y0))
                      << to_string(t) << " " << isa_name(isa) << " K " << K << " N " << N << " M " << M << " acc "
                      << accumulate << " at " << m << "," << n;
                }
            }
        }
      }
}

// For q8_0 and q4_0 the float sums are in one fixed order (quant.h): every ISA gives the same
// bits, whatever the thread count, and a row of a product is the product of that row alone.
TEST(QuantMatmulTest, IntegerKernelsAreBitIdenticalAcrossIsasThreadsAndM) {
  std::mt19937 rng(19);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int threads = omp_get_max_threads();
  // M where the integer path runs (quant.h): 3 rows at any K; 9 (two groups of four and one
  // alone) where the blocks are whole groups of 8 or K > 1024.
  for (QuantType t : {QuantType::kQ8_0, QuantType::kQ4_0})
    for (auto [K, M] : {std::pair{32, 3}, {96, 3}, {288, 3}, {544, 3}, {256, 9}, {512, 7}, {4096, 9}, {1056, 9}}) {
      const int N = 301;  // enough weights for the parallel path at K = 4096
      const QuantMatrix W = random_matrix(t, N, K, rng, 0);
      std::vector<float> X(static_cast<size_t>(M) * K);
      for (float& v : X) v = normal(rng);
      std::vector<float> want(static_cast<size_t>(M) * N);
      quant_matmul_with(QuantIsa::kScalar, t, W.data(), N, K, X.data(), M, want.data(), false);
      for (QuantIsa isa : kIsas) {
        if (!quant_isa_available(isa)) continue;
        std::vector<float> Y(want.size(), 0.0f);
        quant_matmul_with(isa, t, W.data(), N, K, X.data(), M, Y.data(), false);
        for (size_t i = 0; i < Y.size(); ++i)
          ASSERT_EQ(Y[i], want[i]) << to_string(t) << " " << isa_name(isa) << " K " << K << " at " << i;
      }
      for (int nt : {1, 2, 3}) {
        omp_set_num_threads(nt);
        std::vector<float> Y(want.size());
        quant_matmul(t, W.data(), N, K, X.data(), M, Y.data(), false);
        omp_set_num_threads(threads);
        for (size_t i = 0; i < Y.size(); ++i) ASSERT_EQ(Y[i], want[i]) << to_string(t) << " threads " << nt << " at " << i;
      }
      for (int m = 0; m < M; ++m) {
        std::vector<float> y(N);
        quant_gemv(t, W.data(), N, K, X.data() + static_cast<size_t>(m) * K, y.data());
        for (int n = 0; n < N; ++n) ASSERT_EQ(y[n], want[m * N + n]) << to_string(t) << " row " << m << " col " << n;
      }
    }
}

// From M = 32 at K <= 1024 (and for f16) quant_matmul dequantizes panels of W and calls sgemm:
// the panels are fixed, so the result does not depend on the thread count either.
TEST(QuantMatmulTest, ManyRowsDoNotDependOnTheThreadCount) {
  std::mt19937 rng(29);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int threads = omp_get_max_threads();
  const int N = 203, K = 256, M = 40;
  for (QuantType t : kTypes) {
    const QuantMatrix W = random_matrix(t, N, K, rng, 1);
    std::vector<float> X(static_cast<size_t>(M) * K), Y0(static_cast<size_t>(M) * N);
    for (float& v : X) v = normal(rng);
    for (float& v : Y0) v = normal(rng);
    std::vector<float> want = Y0;
    omp_set_num_threads(1);
    quant_matmul(t, W.data(), N, K, X.data(), M, want.data(), true);
    for (int nt : {2, 3}) {
      omp_set_num_threads(nt);
      std::vector<float> Y = Y0;
      quant_matmul(t, W.data(), N, K, X.data(), M, Y.data(), true);
      for (size_t i = 0; i < Y.size(); ++i) ASSERT_EQ(Y[i], want[i]) << to_string(t) << " threads " << nt << " at " << i;
    }
    omp_set_num_threads(threads);
    const size_t rb = quant_row_bytes(t, K);
    for (int m = 0; m < M; m += 13)
      for (int n = 0; n < N; n += 7) {
        const Bound ref = reference(t, W.data() + n * rb, X.data() + static_cast<size_t>(m) * K, K);
        ASSERT_NEAR(want[m * N + n], Y0[m * N + n] + ref.want, ref.tolerance + 1e-6 * std::fabs(Y0[m * N + n]));
      }
  }
}

TEST(QuantMatmulTest, AccumulateAndUnalignedRows) {
  std::mt19937 rng(23);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int N = 45, K = 160, M = 3;  // below the panels (quant.h): quant_gemv gives row 0 bit for bit
  for (QuantType t : kTypes) {
    const QuantMatrix aligned = random_matrix(t, N, K, rng, 0);
    QuantMatrix odd{std::vector<unsigned char>(aligned.bytes.size() + 3), 3};
    std::memcpy(odd.bytes.data() + 3, aligned.data(), aligned.bytes.size());
    std::vector<float> X(static_cast<size_t>(M) * K), Y(static_cast<size_t>(M) * N), Y0(Y.size());
    for (float& v : X) v = normal(rng);
    for (float& v : Y0) v = normal(rng);
    std::vector<float> fresh(Y.size());
    quant_matmul(t, aligned.data(), N, K, X.data(), M, fresh.data(), false);
    Y = Y0;
    quant_matmul(t, odd.data(), N, K, X.data(), M, Y.data(), true);
    for (size_t i = 0; i < Y.size(); ++i) ASSERT_EQ(Y[i], Y0[i] + fresh[i]) << to_string(t) << " at " << i;
    std::vector<float> y(Y0.begin(), Y0.begin() + N);
    quant_gemv(t, odd.data(), N, K, X.data(), y.data(), true);
    for (int n = 0; n < N; ++n) ASSERT_EQ(y[n], Y[n]) << to_string(t) << " gemv at " << n;
  }
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
