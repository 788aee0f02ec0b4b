#include "kernels/quant.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"

namespace potop {

uint16_t f32_to_f16(float x) {
  uint32_t f;
  std::memcpy(&f, &x, sizeof f);
  const uint32_t sign = (f >> 16) & 0x8000u, abs = f & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return static_cast<uint16_t>(sign | (abs > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // 65520 and up round to infinity
  auto round_even = [](uint32_t q, uint32_t rem, uint32_t half) { return rem > half || (rem == half && (q & 1u)) ? q + 1 : q; };
  if (abs < 0x38800000u) {                            // below 2^-14: a subnormal half, in units of 2^-24
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // below 2^-25 (a tie at 2^-25 goes to 0)
    const uint32_t e = abs >> 23, mant = (abs & 0x7FFFFFu) | 0x800000u, shift = 126 - e;
    return static_cast<uint16_t>(sign | round_even(mant >> shift, mant & ((1u << shift) - 1), 1u << (shift - 1)));
  }
  // Rebias the exponent (127 -> 15) and keep 10 of the 23 mantissa bits; a carry out of the
  // mantissa moves into the exponent, as it should.
  return static_cast<uint16_t>(sign | round_even((abs - 0x38000000u) >> 13, abs & 0x1FFFu, 0x1000u));
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  uint32_t bits;
  if (e == 0) {
    const float v = std::ldexp(static_cast<float>(m), -24);  // zero or a subnormal
    return sign ? -v : v;
  }
  bits = e == 31 ? sign | 0x7F800000u | (m << 13) : sign | ((e + 112) << 23) | (m << 13);
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

std::string to_string(QuantType type) {
  switch (type) {
    case QuantType::kF16: return "f16";
    case QuantType::kQ8_0: return "q8_0";
    case QuantType::kQ4_0: return "q4_0";
  }
  return "?";
}

QuantType parse_quant_type(const std::string& name, const std::string& flag) {
  for (QuantType t : {QuantType::kF16, QuantType::kQ8_0, QuantType::kQ4_0})
    if (to_string(t) == name) return t;
  throw Error(flag + " " + name + ": expected f16, q8_0 or q4_0");
}

bool quant_row_fits(QuantType type, int K) { return K > 0 && (type == QuantType::kF16 || K % kQuantBlock == 0); }

size_t quant_row_bytes(QuantType type, int K) {
  POTOP_CHECK(quant_row_fits(type, K), "a row of " + std::to_string(K) + " weights is not whole " + to_string(type) + " blocks");
  const size_t blocks = static_cast<size_t>(K) / kQuantBlock;
  switch (type) {
    case QuantType::kF16: return 2 * static_cast<size_t>(K);
    case QuantType::kQ8_0: return blocks * sizeof(BlockQ8_0);
    case QuantType::kQ4_0: return blocks * sizeof(BlockQ4_0);
  }
  return 0;
}

// llama.cpp's reference quantizers (ggml quantize_row_q8_0_ref, quantize_row_q4_0_ref): the scale
// is computed in f32 and stored as f16; the weights are rounded with the f32 scale.
void quantize_row(QuantType type, const float* x, int K, void* out) {
  (void)quant_row_bytes(type, K);  // checks K
  if (type == QuantType::kF16) {
    auto* h = static_cast<uint16_t*>(out);
    for (int k = 0; k < K; ++k) h[k] = f32_to_f16(x[k]);
    return;
  }
  for (int b = 0; b < K / kQuantBlock; ++b) {
    const float* v = x + b * kQuantBlock;
    if (type == QuantType::kQ8_0) {
      float amax = 0.0f;
      for (int j = 0; j < kQuantBlock; ++j) amax = std::max(amax, std::fabs(v[j]));
      const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
      BlockQ8_0& blk = static_cast<BlockQ8_0*>(out)[b];
      blk.d = f32_to_f16(d);
      for (int j = 0; j < kQuantBlock; ++j) blk.qs[j] = static_cast<int8_t>(std::round(v[j] * id));
    } else {
      // The weight of largest magnitude, with its sign, maps to -8: the scale is negative when it
      // is positive, so that the range [-8, 7] covers the block as tightly as it can.
      float amax = 0.0f, max = 0.0f;
      for (int j = 0; j < kQuantBlock; ++j)
        if (amax < std::fabs(v[j])) amax = std::fabs(v[j]), max = v[j];
      const float d = max / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
      BlockQ4_0& blk = static_cast<BlockQ4_0*>(out)[b];
      blk.d = f32_to_f16(d);
      for (int j = 0; j < kQuantBlock / 2; ++j) {
        const int lo = std::min(15, static_cast<int>(static_cast<int8_t>(v[j] * id + 8.5f)));
        const int hi = std::min(15, static_cast<int>(static_cast<int8_t>(v[j + kQuantBlock / 2] * id + 8.5f)));
        blk.qs[j] = static_cast<uint8_t>(lo | (hi << 4));
      }
    }
  }
}

void dequantize_row(QuantType type, const void* row, int K, float* out) {
  (void)quant_row_bytes(type, K);
  if (type == QuantType::kF16) {
    const auto* h = static_cast<const uint16_t*>(row);
    for (int k = 0; k < K; ++k) out[k] = f16_to_f32(h[k]);
    return;
  }
  for (int b = 0; b < K / kQuantBlock; ++b) {
    float* o = out + b * kQuantBlock;
    if (type == QuantType::kQ8_0) {
      const BlockQ8_0& blk = static_cast<const BlockQ8_0*>(row)[b];
      const float d = f16_to_f32(blk.d);
      for (int j = 0; j < kQuantBlock; ++j) o[j] = d * blk.qs[j];
    } else {
      const BlockQ4_0& blk = static_cast<const BlockQ4_0*>(row)[b];
      const float d = f16_to_f32(blk.d);
      for (int j = 0; j < kQuantBlock / 2; ++j) {
        o[j] = d * ((blk.qs[j] & 0x0F) - 8);
        o[j + kQuantBlock / 2] = d * ((blk.qs[j] >> 4) - 8);
      }
    }
  }
}

namespace {

// ---- Scalar: the reference the vector kernels are tested against, and the fallback.
float dot_scalar(QuantType type, const void* row, const float* x, int K) {
  float sum = 0.0f;
  if (type == QuantType::kF16) {
    const auto* h = static_cast<const uint16_t*>(row);
    for (int k = 0; k < K; ++k) sum += f16_to_f32(h[k]) * x[k];
    return sum;
  }
  for (int b = 0; b < K / kQuantBlock; ++b) {
    const float* v = x + b * kQuantBlock;
    float s = 0.0f;
    uint16_t d;
    if (type == QuantType::kQ8_0) {
      const BlockQ8_0& blk = static_cast<const BlockQ8_0*>(row)[b];
      for (int j = 0; j < kQuantBlock; ++j) s += blk.qs[j] * v[j];
      d = blk.d;
    } else {
      const BlockQ4_0& blk = static_cast<const BlockQ4_0*>(row)[b];
      for (int j = 0; j < kQuantBlock / 2; ++j)
        s += ((blk.qs[j] & 0x0F) - 8) * v[j] + ((blk.qs[j] >> 4) - 8) * v[j + kQuantBlock / 2];
      d = blk.d;
    }
    sum += f16_to_f32(d) * s;
  }
  return sum;
}

// ---- AVX2 (with FMA and F16C): eight lanes. Each block's 32 products are summed in one
// register, then scaled by the block's d into the accumulator.
#define POTOP_AVX2 __attribute__((target("avx2,fma,f16c")))

POTOP_AVX2 inline __m256 widen8(__m128i bytes) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)); }

// Σ over 32 weights given as two registers of 16 int8 (weights 0-15, 16-31).
POTOP_AVX2 inline __m256 block_products8(__m128i w0, __m128i w1, const float* v) {
  __m256 s = _mm256_mul_ps(widen8(w0), _mm256_loadu_ps(v));
  s = _mm256_fmadd_ps(widen8(_mm_srli_si128(w0, 8)), _mm256_loadu_ps(v + 8), s);
  s = _mm256_fmadd_ps(widen8(w1), _mm256_loadu_ps(v + 16), s);
  return _mm256_fmadd_ps(widen8(_mm_srli_si128(w1, 8)), _mm256_loadu_ps(v + 24), s);
}

POTOP_AVX2 inline float sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The low and high nibbles of 16 bytes, each less 8: weights 0-15 and 16-31 of a q4_0 block.
POTOP_AVX2 inline void nibbles(const uint8_t* qs, __m128i& lo, __m128i& hi) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i mask = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  lo = _mm_sub_epi8(_mm_and_si128(raw, mask), eight);
  hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(raw, 4), mask), eight);
}

// Block b of a q8_0 or q4_0 row: its 32 weights as int8 in two registers (0-15, 16-31), and
// its scale.
POTOP_AVX2 inline float load_block(QuantType type, const void* row, int b, __m128i& w0, __m128i& w1) {
  if (type == QuantType::kQ8_0) {
    const BlockQ8_0& blk = static_cast<const BlockQ8_0*>(row)[b];
    w0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.qs));
    w1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.qs + 16));
    return _cvtsh_ss(blk.d);
  }
  const BlockQ4_0& blk = static_cast<const BlockQ4_0*>(row)[b];
  nibbles(blk.qs, w0, w1);
  return _cvtsh_ss(blk.d);
}

POTOP_AVX2 float dot_avx2(QuantType type, const void* row, const float* x, int K) {
  __m256 acc = _mm256_setzero_ps();
  if (type == QuantType::kF16) {
    const auto* h = static_cast<const uint16_t*>(row);
    int k = 0;
    for (; k + 8 <= K; k += 8)
      acc = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + k))),
                            _mm256_loadu_ps(x + k), acc);
    float sum = sum8(acc);
    for (; k < K; ++k) sum += _cvtsh_ss(h[k]) * x[k];
    return sum;
  }
  for (int b = 0; b < K / kQuantBlock; ++b) {
    const float* v = x + b * kQuantBlock;
    __m128i w0, w1;
    const float d = load_block(type, row, b, w0, w1);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), block_products8(w0, w1, v), acc);
  }
  return sum8(acc);
}

// ---- AVX-512: sixteen lanes, one block in two multiply-adds.
#define POTOP_AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))

// The zero-masked forms of the conversions: g++ 12 warns that the plain ones' "undefined" source
// operand may be used uninitialized (GCC bug 105593), and CI builds with -Werror.
constexpr __mmask16 kAll16 = 0xFFFF;

POTOP_AVX512 inline __m512 widen16(__m128i bytes) {
  return _mm512_maskz_cvtepi32_ps(kAll16, _mm512_maskz_cvtepi8_epi32(kAll16, bytes));
}

POTOP_AVX512 inline float sum16(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float s = 0.0f;
  for (float x : lanes) s += x;
  return s;
}

POTOP_AVX512 float dot_avx512(QuantType type, const void* row, const float* x, int K) {
  __m512 acc = _mm512_setzero_ps();
  if (type == QuantType::kF16) {
    const auto* h = static_cast<const uint16_t*>(row);
    int k = 0;
    for (; k + 16 <= K; k += 16)
      acc = _mm512_fmadd_ps(_mm512_maskz_cvtph_ps(kAll16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + k))),
                            _mm512_loadu_ps(x + k), acc);
    float sum = sum16(acc);
    for (; k < K; ++k) sum += _cvtsh_ss(h[k]) * x[k];
    return sum;
  }
  for (int b = 0; b < K / kQuantBlock; ++b) {
    const float* v = x + b * kQuantBlock;
    __m128i w0, w1;
    const float d = load_block(type, row, b, w0, w1);
    const __m512 s = _mm512_fmadd_ps(widen16(w1), _mm512_loadu_ps(v + 16), _mm512_mul_ps(widen16(w0), _mm512_loadu_ps(v)));
    acc = _mm512_fmadd_ps(_mm512_set1_ps(d), s, acc);
  }
  return sum16(acc);
}

using DotKernel = float (*)(QuantType, const void*, const float*, int);

QuantIsa best_isa() {
  if (quant_isa_available(QuantIsa::kAvx512)) return QuantIsa::kAvx512;
  if (quant_isa_available(QuantIsa::kAvx2)) return QuantIsa::kAvx2;
  return QuantIsa::kScalar;
}

DotKernel kernel_of(QuantIsa isa) {
  switch (isa) {
    case QuantIsa::kAvx512: return dot_avx512;
    case QuantIsa::kAvx2: return dot_avx2;
    case QuantIsa::kScalar: break;
  }
  return dot_scalar;
}

DotKernel best_kernel() {
  static const DotKernel kernel = kernel_of(best_isa());
  return kernel;
}

}  // namespace

bool quant_isa_available(QuantIsa isa) {
  __builtin_cpu_init();
  // Every CPU with AVX2 has F16C (Intel since Ivy Bridge, AMD since Piledriver, both earlier than
  // their AVX2), and clang's __builtin_cpu_supports does not know "f16c".
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  switch (isa) {
    case QuantIsa::kScalar: return true;
    case QuantIsa::kAvx2: return avx2;
    case QuantIsa::kAvx512: return avx2 && __builtin_cpu_supports("avx512f");
  }
  return false;
}

float quant_dot_with(QuantIsa isa, QuantType type, const void* row, const float* x, int K) {
  POTOP_CHECK(quant_isa_available(isa), "this CPU does not run that kernel");
  (void)quant_row_bytes(type, K);
  return kernel_of(isa)(type, row, x, K);
}

const char* quant_isa_name() {
  switch (best_isa()) {
    case QuantIsa::kAvx512: return "avx512";
    case QuantIsa::kAvx2: return "avx2";
    case QuantIsa::kScalar: break;
  }
  return "scalar";
}

float quant_dot(QuantType type, const void* row, const float* x, int K) {
  (void)quant_row_bytes(type, K);
  return best_kernel()(type, row, x, K);
}

void quant_gemv(QuantType type, const void* W, int N, int K, const float* x, float* y) {
  const size_t row_bytes = quant_row_bytes(type, K);
  const DotKernel dot = best_kernel();
  const auto* rows = static_cast<const unsigned char*>(W);
  // Below ~32 KiB of weights a parallel region costs more than it saves.
  const bool parallel = row_bytes * static_cast<size_t>(N) >= (1 << 15) && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (parallel)
  for (int n = 0; n < N; ++n) y[n] = dot(type, rows + static_cast<size_t>(n) * row_bytes, x, K);
}

}  // namespace potop
