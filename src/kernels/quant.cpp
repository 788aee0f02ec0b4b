#include "kernels/quant.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/scratch.h"
#include "kernels/gemm.h"
#include "kernels/quant_interleaved.h"

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

namespace {

// F16C's conversions round to nearest even and keep subnormals and infinities, as f32_to_f16 and
// f16_to_f32 do; the tests hold the two paths equal bit for bit. Only a NaN's payload may differ
// (f32_to_f16 makes every NaN the canonical quiet one): it stays a NaN of the same sign.
__attribute__((target("avx,f16c"))) void floats_to_halves_f16c(const float* x, int n, uint16_t* out) {
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = f32_to_f16(x[i]);
}

__attribute__((target("avx,f16c"))) void halves_to_floats_f16c(const uint16_t* h, int n, float* out) {
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
  }
  for (; i < n; ++i) out[i] = f16_to_f32(h[i]);
}

// Every CPU with AVX2 has F16C (quant_isa_available says why); asked once, not per row.
bool has_f16c() {
  static const bool yes = quant_isa_available(QuantIsa::kAvx2);
  return yes;
}

}  // namespace

void floats_to_halves(const float* x, int n, uint16_t* out) {
  if (has_f16c()) return floats_to_halves_f16c(x, n, out);
  for (int i = 0; i < n; ++i) out[i] = f32_to_f16(x[i]);
}

void halves_to_floats(const uint16_t* h, int n, float* out) {
  if (has_f16c()) return halves_to_floats_f16c(h, n, out);
  for (int i = 0; i < n; ++i) out[i] = f16_to_f32(h[i]);
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

std::string quant_types_name(const std::vector<QuantType>& types) {
  std::vector<QuantType> seen;
  std::string out;
  for (QuantType t : types) {
    if (std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
    seen.push_back(t);
    if (!out.empty()) out += '+';
    out += to_string(t);
  }
  return out;
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
// is computed in f32 and stored as f16; the weights are rounded with the f32 scale. Blocks are
// written and read through byte pointers: a row may start at any address (blocks are 34 and 18
// bytes), and an f16 at an odd one.
void quantize_row(QuantType type, const float* x, int K, void* out) {
  (void)quant_row_bytes(type, K);  // checks K
  auto* o = static_cast<unsigned char*>(out);
  auto put16 = [](unsigned char* p, uint16_t h) { std::memcpy(p, &h, 2); };
  if (type == QuantType::kF16) {
    for (int k = 0; k < K; ++k) put16(o + 2 * static_cast<size_t>(k), f32_to_f16(x[k]));
    return;
  }
  for (int b = 0; b < K / kQuantBlock; ++b) {
    const float* v = x + b * kQuantBlock;
    if (type == QuantType::kQ8_0) {
      float amax = 0.0f;
      for (int j = 0; j < kQuantBlock; ++j) amax = std::max(amax, std::fabs(v[j]));
      const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
      unsigned char* blk = o + b * sizeof(BlockQ8_0);
      put16(blk, f32_to_f16(d));
      for (int j = 0; j < kQuantBlock; ++j) blk[2 + j] = static_cast<unsigned char>(static_cast<int8_t>(std::round(v[j] * id)));
    } else {
      // The weight of largest magnitude, with its sign, maps to -8: the scale is negative when it
      // is positive, so that the range [-8, 7] covers the block as tightly as it can.
      float amax = 0.0f, max = 0.0f;
      for (int j = 0; j < kQuantBlock; ++j)
        if (amax < std::fabs(v[j])) amax = std::fabs(v[j]), max = v[j];
      const float d = max / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
      unsigned char* blk = o + b * sizeof(BlockQ4_0);
      put16(blk, f32_to_f16(d));
      for (int j = 0; j < kQuantBlock / 2; ++j) {
        const int lo = std::min(15, static_cast<int>(static_cast<int8_t>(v[j] * id + 8.5f)));
        const int hi = std::min(15, static_cast<int>(static_cast<int8_t>(v[j + kQuantBlock / 2] * id + 8.5f)));
        blk[2 + j] = static_cast<unsigned char>(lo | (hi << 4));
      }
    }
  }
}

void dequantize_row(QuantType type, const void* row, int K, float* out) {
  (void)quant_row_bytes(type, K);
  const auto* r = static_cast<const unsigned char*>(row);
  auto get16 = [](const unsigned char* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16_to_f32(h);
  };
  if (type == QuantType::kF16) {
    for (int k = 0; k < K; ++k) out[k] = get16(r + 2 * static_cast<size_t>(k));
    return;
  }
  for (int b = 0; b < K / kQuantBlock; ++b) {
    float* o = out + b * kQuantBlock;
    if (type == QuantType::kQ8_0) {
      const unsigned char* blk = r + b * sizeof(BlockQ8_0);
      const float d = get16(blk);
      for (int j = 0; j < kQuantBlock; ++j) o[j] = d * static_cast<int8_t>(blk[2 + j]);
    } else {
      const unsigned char* blk = r + b * sizeof(BlockQ4_0);
      const float d = get16(blk);
      for (int j = 0; j < kQuantBlock / 2; ++j) {
        o[j] = d * ((blk[2 + j] & 0x0F) - 8);
        o[j + kQuantBlock / 2] = d * ((blk[2 + j] >> 4) - 8);
      }
    }
  }
}

namespace {

// ======== f16: f16 weights times f32 x, in float.

float dot_f16_scalar(const void* row, const float* x, int K) {
  const auto* h = static_cast<const unsigned char*>(row);
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) {
    uint16_t w;
    std::memcpy(&w, h + 2 * static_cast<size_t>(k), 2);
    sum += f16_to_f32(w) * x[k];
  }
  return sum;
}

#define POTOP_AVX2 __attribute__((target("avx2,fma,f16c")))
#define POTOP_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define POTOP_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

POTOP_AVX2 inline float sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

POTOP_AVX2 inline float load_f16(const unsigned char* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

POTOP_AVX2 float dot_f16_avx2(const void* row, const float* x, int K) {
  const auto* h = static_cast<const unsigned char*>(row);
  __m256 acc = _mm256_setzero_ps();
  int k = 0;
  for (; k + 8 <= K; k += 8)
    acc = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 2 * k))),
                          _mm256_loadu_ps(x + k), acc);
  float sum = sum8(acc);
  for (; k < K; ++k) sum += load_f16(h + 2 * k) * x[k];
  return sum;
}

// The zero-masked forms of some AVX-512 intrinsics: g++ 12 warns that the plain ones' "undefined"
// source operand may be used uninitialized (GCC bug 105593), and CI builds with -Werror.
constexpr __mmask16 kAll16 = 0xFFFF;

POTOP_AVX512 inline float sum16(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float s = 0.0f;
  for (float x : lanes) s += x;
  return s;
}

POTOP_AVX512 float dot_f16_avx512(const void* row, const float* x, int K) {
  const auto* h = static_cast<const unsigned char*>(row);
  __m512 acc = _mm512_setzero_ps();
  int k = 0;
  for (; k + 16 <= K; k += 16)
    acc = _mm512_fmadd_ps(_mm512_maskz_cvtph_ps(kAll16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + 2 * k))),
                          _mm512_loadu_ps(x + k), acc);
  float sum = sum16(acc);
  for (; k < K; ++k) sum += load_f16(h + 2 * k) * x[k];
  return sum;
}

// ======== q8_0 and q4_0: quantized activations, integer block sums, one float FMA per block.
//
// Blocks are read through byte pointers (memcpy and unaligned loads): 34- and 18-byte blocks
// sit at any alignment.

constexpr size_t kQ8Bytes = sizeof(BlockQ8_0), kQ4Bytes = sizeof(BlockQ4_0);
constexpr size_t block_bytes(QuantType t) { return t == QuantType::kQ8_0 ? kQ8Bytes : kQ4Bytes; }

// Activations quantized for the integer kernels: M rows of K, row m at q + m·K, d + m·nb, s + m·nb.
struct QX {
  const int8_t* q;
  const float* d;
  const int32_t* s;
};

// The clamp before the conversion keeps a NaN or infinite x from an undefined float-to-int cast;
// written as _mm256_max_ps / _mm256_min_ps behave (a NaN gives the second operand).
inline float clamp127(float t) {
  t = t > -127.0f ? t : -127.0f;
  return t < 127.0f ? t : 127.0f;
}

void quantize_x_scalar(const float* x, int K, int8_t* q, float* d, int32_t* sum) {
  for (int b = 0; b < K / kQuantBlock; ++b) {
    const float* v = x + b * kQuantBlock;
    float amax = 0.0f;
    for (int j = 0; j < kQuantBlock; ++j) amax = std::max(amax, std::fabs(v[j]));
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    d[b] = amax / 127.0f;
    int32_t s = 0;
    for (int j = 0; j < kQuantBlock; ++j) {
      const int qj = static_cast<int>(std::nearbyint(clamp127(v[j] * id)));  // ties to even
      q[b * kQuantBlock + j] = static_cast<int8_t>(qj);
      s += qj;
    }
    sum[b] = s;
  }
}

POTOP_AVX2 inline int32_t hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// x · id clamped and rounded to nearest even, as int32.
POTOP_AVX2 inline __m256i to_q(__m256 v, __m256 id) {
  const __m256 t = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(v, id), _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
  return _mm256_cvtps_epi32(_mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// The same values as quantize_x_scalar: the maximum is exact, the products are the same float
// products, and the rounding is the same (to nearest even).
POTOP_AVX2 void quantize_x_avx2(const float* x, int K, int8_t* q, float* d, int32_t* sum) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int b = 0; b < K / kQuantBlock; ++b) {
    const float* v = x + b * kQuantBlock;
    __m256 v0 = _mm256_loadu_ps(v), v1 = _mm256_loadu_ps(v + 8), v2 = _mm256_loadu_ps(v + 16), v3 = _mm256_loadu_ps(v + 24);
    __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v0), _mm256_andnot_ps(sign, v1)),
                             _mm256_max_ps(_mm256_andnot_ps(sign, v2), _mm256_andnot_ps(sign, v3)));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    d[b] = amax / 127.0f;
    const __m256 mul = _mm256_set1_ps(id);
    const __m256i i0 = to_q(v0, mul), i1 = to_q(v1, mul), i2 = to_q(v2, mul), i3 = to_q(v3, mul);
    sum[b] = hsum_epi32(_mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3)));
    // int32 -> int8 (no saturation: |q| <= 127); the packs interleave 128-bit lanes, the
    // permutation puts them back in order.
    const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + b * kQuantBlock),
                        _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  }
}

// ---- Scalar: the reference, and the fallback.

int32_t block_sum_scalar(QuantType type, const unsigned char* blk, const int8_t* qx) {
  int32_t s = 0;
  if (type == QuantType::kQ8_0) {
    const auto* w = reinterpret_cast<const int8_t*>(blk + 2);
    for (int j = 0; j < kQuantBlock; ++j) s += w[j] * qx[j];
  } else {
    const unsigned char* w = blk + 2;
    for (int j = 0; j < kQuantBlock / 2; ++j) s += ((w[j] & 0x0F) - 8) * qx[j] + ((w[j] >> 4) - 8) * qx[j + kQuantBlock / 2];
  }
  return s;
}

float f16_at(const unsigned char* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// The canonical float sum (see quant.h), which every ISA reproduces.
float row_dot_scalar(QuantType type, const unsigned char* row, const int8_t* qx, const float* dx, const int32_t*, int nb) {
  const size_t bb = block_bytes(type);
  float lane[8] = {};
  for (int b0 = 0; b0 < nb; b0 += 8)
    for (int l = 0; l < 8; ++l) {
      const int b = b0 + l;
      const float scale = b < nb ? f16_at(row + b * bb) * dx[b] : 0.0f;
      const int32_t s = b < nb ? block_sum_scalar(type, row + b * bb, qx + b * kQuantBlock) : 0;
      lane[l] = std::fma(scale, static_cast<float>(s), lane[l]);
    }
  return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

// q4_0's vector kernels take each row of quantized activations in nibble order, so that their
// loads need no shuffle: per group of eight blocks, the first 16 bytes of blocks 0-3 (the x of
// their low nibbles), then their last 16, then the same for blocks 4-7; a row's last group of
// `count` blocks likewise, packed in its 32 · count bytes. Rearranged once per product, read by
// every row of W. Block j of a group has its first 16 bytes at nibble_lo, its last at nibble_hi.
constexpr int nibble_lo(int, int j) { return j < 4 ? 16 * j : 128 + 16 * (j - 4); }
constexpr int nibble_hi(int count, int j) {
  return j < 4 ? 16 * std::min(count, 4) + 16 * j : 128 + 16 * (count - 4) + 16 * (j - 4);
}

void to_nibble_order(int8_t* q, int K) {
  const int nb = K / kQuantBlock;
  int8_t group[8 * kQuantBlock];
  for (int b = 0; b < nb; b += 8) {
    const int count = std::min(8, nb - b);
    int8_t* g = q + b * kQuantBlock;
    for (int j = 0; j < count; ++j) {
      std::memcpy(group + nibble_lo(count, j), g + j * kQuantBlock, 16);
      std::memcpy(group + nibble_hi(count, j), g + j * kQuantBlock + 16, 16);
    }
    std::memcpy(g, group, static_cast<size_t>(count) * kQuantBlock);
  }
}

// ---- AVX2: one block per 256-bit register.

// The helpers of a row kernel inline into its loops, whose constants (indices, masks) then stay in
// registers; g++ left some as calls (a row's last blocks: a call, and a realigned stack, per row).
#define POTOP_INLINE inline __attribute__((always_inline))

// Eight int32 partial sums of a block: q8_0 by llama.cpp's sign trick (|w| unsigned times x with
// w's sign; a pair of products is at most 2·128·127 < 2^15, so maddubs never saturates); q4_0
// with the unsigned nibbles 0..15 (the −8 is taken off afterwards, as 8 Σ q).
POTOP_AVX2 inline __m256i block_q8_avx2(const unsigned char* blk, const int8_t* qx) {
  const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx));
  return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w)), _mm256_set1_epi16(1));
}

// q4_0's x in nibble order: its first 16 bytes at x_lo, its last 16 at x_hi.
POTOP_AVX2 inline __m256i block_q4_avx2(const unsigned char* blk, const int8_t* x_lo, const int8_t* x_hi) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
  const __m256i w = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(0x0F));
  const __m256i x = _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x_hi)),
                                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(x_lo)));
  return _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), _mm256_set1_epi16(1));
}

// Block j of the group of `count` blocks at row (weights) and qx (its x), as its row kernel takes it.
template <QuantType T>
POTOP_AVX2 inline __m256i block_avx2(const unsigned char* row, const int8_t* qx, int count, int j) {
  const unsigned char* blk = row + j * block_bytes(T);
  if constexpr (T == QuantType::kQ8_0)
    return block_q8_avx2(blk, qx + j * kQuantBlock);
  else
    return block_q4_avx2(blk, qx + nibble_lo(count, j), qx + nibble_hi(count, j));
}

// Eight registers of eight int32 to the eight sums, in order.
POTOP_AVX2 inline __m256i hsum8x8(const __m256i* v) {
  const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  const __m256i c = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, c, 0x20), _mm256_permute2x128_si256(a, c, 0x31));
}

// q4_0 two blocks at a time: the nibbles of blocks b, b + 1 in one register (block b's 16 bytes in
// the low 128 bits), split into low and high, against x in nibble order (the first 16 bytes of
// both blocks, then their last 16: two loads). One maddubs per half; a pair of products is at most
// 2·15·127, so the two halves' int16 add without overflow before one madd: four int32 per block.
struct Q4PairAvx2 {
  __m256i lo, hi;
};

POTOP_AVX2 inline Q4PairAvx2 q4_pair_weights_avx2(const unsigned char* blk) {
  const __m256i raw = _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + kQ4Bytes + 2)),
                                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)));
  const __m256i low = _mm256_set1_epi8(0x0F);
  return {_mm256_and_si256(raw, low), _mm256_and_si256(_mm256_srli_epi16(raw, 4), low)};
}

// Pair l (blocks 2l, 2l + 1) of a whole group whose x (nibble order) is at qx.
POTOP_AVX2 inline __m256i q4_pair_avx2(const Q4PairAvx2& w, const int8_t* qx, int l) {
  const __m256i x_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx + nibble_lo(8, 2 * l)));
  const __m256i x_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx + nibble_hi(8, 2 * l)));
  const __m256i lo = _mm256_maddubs_epi16(w.lo, x_lo), hi = _mm256_maddubs_epi16(w.hi, x_hi);
  return _mm256_madd_epi16(_mm256_add_epi16(lo, hi), _mm256_set1_epi16(1));
}

// Four pairs' sums (block 2l's four int32 in the low 128 bits of v[l], 2l + 1's in the high) to
// the eight block sums, in order.
POTOP_AVX2 inline __m256i hsum_pairs(const __m256i* v) {
  // 128-bit lanes (blocks 0, 2, 4, 6) and (1, 3, 5, 7).
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  return _mm256_permutevar8x32_epi32(h, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// The eight exact sums of whole group b..b+7 (q4_0 with unsigned nibbles), as row_dot_avx2 takes them.
template <QuantType T>
POTOP_AVX2 inline __m256i group_sums_avx2(const unsigned char* row, const int8_t* qx, int b) {
  constexpr size_t bb = block_bytes(T);
  if constexpr (T == QuantType::kQ4_0) {
    __m256i v[4];
    for (int l = 0; l < 4; ++l)
      v[l] = q4_pair_avx2(q4_pair_weights_avx2(row + (b + 2 * l) * bb), qx + b * kQuantBlock, l);
    return hsum_pairs(v);
  } else {
    __m256i v[8];
    for (int l = 0; l < 8; ++l) v[l] = block_q8_avx2(row + (b + l) * bb, qx + (b + l) * kQuantBlock);
    return hsum8x8(v);
  }
}

POTOP_AVX2 inline uint16_t u16_at(const unsigned char* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return h;
}

// The float step of eight blocks b..b+7 (count of them real, the rest zero): lane l +=
// (d_w · d_x) · Σ_int.
template <QuantType T>
POTOP_AVX2 inline __m256 add_group(__m256 acc, __m256i sums, const unsigned char* row, const float* dx,
                                   const int32_t* sx, int b, int count) {
  constexpr size_t bb = block_bytes(T);
  __m256 dxv;
  __m128i dw;
  if (count == 8) {
    dxv = _mm256_loadu_ps(dx + b);
    if constexpr (T == QuantType::kQ4_0)
      sums = _mm256_sub_epi32(sums, _mm256_slli_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sx + b)), 3));
    const unsigned char* p = row + b * bb;
    dw = _mm_setr_epi16(static_cast<short>(u16_at(p)), static_cast<short>(u16_at(p + bb)),
                        static_cast<short>(u16_at(p + 2 * bb)), static_cast<short>(u16_at(p + 3 * bb)),
                        static_cast<short>(u16_at(p + 4 * bb)), static_cast<short>(u16_at(p + 5 * bb)),
                        static_cast<short>(u16_at(p + 6 * bb)), static_cast<short>(u16_at(p + 7 * bb)));
  } else {
    // The lanes past `count` zero. Masked loads, not a stack array filled element by element: a
    // vector load of freshly stored scalars stalls on store forwarding, and with a row of 12
    // blocks (384 inputs) that stall cost more than the 8 blocks before it.
    const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    dxv = _mm256_maskload_ps(dx + b, live);
    if constexpr (T == QuantType::kQ4_0)
      sums = _mm256_sub_epi32(sums, _mm256_slli_epi32(_mm256_maskload_epi32(sx + b, live), 3));
    const auto w_at = [&](int l) { return static_cast<short>(l < count ? u16_at(row + (b + l) * bb) : 0); };
    dw = _mm_setr_epi16(w_at(0), w_at(1), w_at(2), w_at(3), w_at(4), w_at(5), w_at(6), w_at(7));
  }
  return _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtph_ps(dw), dxv), _mm256_cvtepi32_ps(sums), acc);
}

// The blocks past the last whole group of eight, one 256-bit block at a time.
template <QuantType T>
POTOP_AVX2 POTOP_INLINE __m256 tail_avx2(__m256 acc, const unsigned char* row, const int8_t* qx, const float* dx,
                                   const int32_t* sx, int b, int nb) {
  if (b >= nb) return acc;
  const unsigned char* group = row + b * block_bytes(T);
  __m256i v[8];
  for (int l = 0; l < 8; ++l)
    v[l] = b + l < nb ? block_avx2<T>(group, qx + b * kQuantBlock, nb - b, l) : _mm256_setzero_si256();
  return add_group<T>(acc, hsum8x8(v), row, dx, sx, b, nb - b);
}

template <QuantType T>
POTOP_AVX2 float row_dot_avx2(const unsigned char* row, const int8_t* qx, const float* dx, const int32_t* sx, int nb) {
  __m256 acc = _mm256_setzero_ps();
  int b = 0;
  for (; b + 8 <= nb; b += 8) acc = add_group<T>(acc, group_sums_avx2<T>(row, qx, b), row, dx, sx, b, 8);
  return sum8(tail_avx2<T>(acc, row, qx, dx, sx, b, nb));
}

// The gathered f16 scales of blocks b..b+7 of a row, as floats.
template <QuantType T>
POTOP_AVX2 inline __m256 scales8(const unsigned char* row, int b) {
  constexpr size_t bb = block_bytes(T);
  const unsigned char* p = row + b * bb;
  return _mm256_cvtph_ps(_mm_setr_epi16(static_cast<short>(u16_at(p)), static_cast<short>(u16_at(p + bb)),
                                        static_cast<short>(u16_at(p + 2 * bb)), static_cast<short>(u16_at(p + 3 * bb)),
                                        static_cast<short>(u16_at(p + 4 * bb)), static_cast<short>(u16_at(p + 5 * bb)),
                                        static_cast<short>(u16_at(p + 6 * bb)), static_cast<short>(u16_at(p + 7 * bb))));
}

// add_group's float step for a whole group, its scales dw already gathered (the same operations,
// so the same result).
template <QuantType T>
POTOP_AVX2 inline __m256 add_group8(__m256 acc, __m256i sums, __m256 dw, const float* dx, const int32_t* sx, int b) {
  if constexpr (T == QuantType::kQ4_0)
    sums = _mm256_sub_epi32(sums, _mm256_slli_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sx + b)), 3));
  return _mm256_fmadd_ps(_mm256_mul_ps(dw, _mm256_loadu_ps(dx + b)), _mm256_cvtepi32_ps(sums), acc);
}

// Four rows of x against one row of W (x row m at qx + m·K, its scales at dx + m·nb and sums at
// sx + m·nb): each weight block is decoded and its scale read once for the four, and each row's
// result is row_dot_avx2's, bit for bit (the same sums in the same order).
template <QuantType T>
POTOP_AVX2 void rows4_dot_avx2(const unsigned char* row, const int8_t* qx, const float* dx, const int32_t* sx, int nb,
                               size_t K, float* out) {
  constexpr size_t bb = block_bytes(T);
  const size_t nbs = static_cast<size_t>(nb);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int b = 0;
  for (; b + 8 <= nb; b += 8) {
    __m256i w[8], sign[8];
    Q4PairAvx2 pairs[4];
    if constexpr (T == QuantType::kQ8_0) {
      for (int l = 0; l < 8; ++l) {
        sign[l] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + (b + l) * bb + 2));
        w[l] = _mm256_sign_epi8(sign[l], sign[l]);
      }
    } else {
      for (int l = 0; l < 4; ++l) pairs[l] = q4_pair_weights_avx2(row + (b + 2 * l) * bb);
    }
    const __m256 dw = scales8<T>(row, b);
    for (int m = 0; m < 4; ++m) {
      const int8_t* q = qx + m * K + static_cast<size_t>(b) * kQuantBlock;
      __m256i sums;
      if constexpr (T == QuantType::kQ8_0) {
        __m256i v[8];
        for (int l = 0; l < 8; ++l) {
          const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + l * kQuantBlock));
          v[l] = _mm256_madd_epi16(_mm256_maddubs_epi16(w[l], _mm256_sign_epi8(x, sign[l])), _mm256_set1_epi16(1));
        }
        sums = hsum8x8(v);
      } else {
        __m256i v[4];
        for (int l = 0; l < 4; ++l) v[l] = q4_pair_avx2(pairs[l], q, l);
        sums = hsum_pairs(v);
      }
      acc[m] = add_group8<T>(acc[m], sums, dw, dx + m * nbs, sx + m * nbs, b);
    }
  }
  for (int m = 0; m < 4; ++m)
    out[m] = sum8(tail_avx2<T>(acc[m], row, qx + m * K, dx + m * nbs, sx + m * nbs, b, nb));
}

// ---- AVX-512: a group of eight blocks at a time, its eight exact sums reduced in 512-bit
// registers and its scales gathered with one word permutation. The blocks past the last whole
// group take the same path through masked loads, which read nothing past the row and give zeros
// for the missing blocks: their sums, weight scales and x scales are 0, so their lanes add
// fma(0, 0, lane), as in the scalar code.

// The low 128 and 256 bits (zero-masked extracts: g++ 12's casts warn as above).
constexpr __mmask8 kAll8 = 0xFF;
POTOP_AVX512 POTOP_INLINE __m128i low128(__m512i v) { return _mm512_maskz_extracti32x4_epi32(0xF, v, 0); }
POTOP_AVX512 POTOP_INLINE __m256i low256(__m512i v) { return _mm512_maskz_extracti64x4_epi64(0xF, v, 0); }

// The part of a group a step covers: all eight blocks, or a row's last blocks (the first `count`
// of the group, fewer than eight), through masked loads; when they are four or fewer, blocks 4-7
// are not touched at all (a row of 384 inputs is a group and four blocks).
enum class Part { kWhole, kFirst, kFirstOfFour };
constexpr bool masked(Part part) { return part != Part::kWhole; }
constexpr bool has_upper(Part part) { return part != Part::kFirstOfFour; }

// A mask of the first n bytes of 64 (n clamped to 0..64).
inline __mmask64 first_bytes(int n) {
  return n >= 64 ? ~__mmask64{0} : n <= 0 ? __mmask64{0} : (__mmask64{1} << n) - 1;
}

// 64 bytes at p, where `left` bytes of the row remain from p: a whole group reads them all, a
// row's last group only those, the rest zero.
template <Part kPart>
POTOP_AVX512 POTOP_INLINE __m512i load64(const void* p, int left) {
  if constexpr (masked(kPart))
    return _mm512_maskz_loadu_epi8(first_bytes(left), p);
  else
    return _mm512_loadu_si512(p);
}

// Indices for _mm512_permutex2var_epi16: words 0-31 of its first source, 32-63 of its second.
struct WordIndex {
  int16_t w[32];
};
template <class F>
constexpr WordIndex word_index(F word) {
  WordIndex ix{};
  for (int i = 0; i < 32; ++i) ix.w[i] = static_cast<int16_t>(word(i));
  return ix;
}
POTOP_AVX512 POTOP_INLINE __m512i index_of(const WordIndex& ix) { return _mm512_loadu_si512(ix.w); }

// A q4_0 group is 144 bytes, 72 words, block j's scale at word 9j and its 16 quant bytes at words
// 9j + 1 .. 9j + 8. Loaded as three windows: bytes 0-63, 64-127 and 80-143 (the last ends at the
// group's end). The scales and blocks 0-3 come from the first two windows, blocks 4-7 from the
// last two.
constexpr WordIndex kQ4Scales = word_index([](int i) { return i < 8 ? 9 * i : 0; });
constexpr WordIndex kQ4Quants03 = word_index([](int i) { return 9 * (i / 8) + 1 + i % 8; });
constexpr WordIndex kQ4Quants47 = word_index([](int i) {
  const int word = 9 * (4 + i / 8) + 1 + i % 8;  // of the group
  return word < 64 ? word - 32 : 32 + word - 40;
});
// A q8_0 group is 272 bytes, block j's scale at byte 34j: scales 0-3 from the windows at bytes 0
// and 64, scales 4-7 (bytes 136 + 34i) from those at 136 and 200, with the same index.
constexpr WordIndex kQ8Scales = word_index([](int i) { return i < 4 ? 17 * i : 0; });

// A group's weights ready for unsigned × signed products, and its scales as floats.
//   q4_0  w = the low nibbles of blocks 0-3 (block j in 128-bit lane j), their high nibbles, then
//         the same for blocks 4-7; unsigned 0..15.
//   q8_0  w[l] = |weights| of blocks 2l (low half) and 2l + 1 (high half), neg[l] their signs;
//         or, kShifted, the weights + 128 (0..255), whose sums are 128 Σq too large (taken off as
//         q4_0's 8 Σq is). Only vpdpbusd takes those: maddubs would saturate at 2·255·127.
struct GroupWeights {
  __m512i w[4];
  __mmask64 neg[4];
  __m256 dw;
};

template <QuantType T, Part kPart, bool kShifted>
POTOP_AVX512 POTOP_INLINE GroupWeights group_weights(const unsigned char* p, int count) {
  GroupWeights g;
  const int left = count * static_cast<int>(block_bytes(T));
  if constexpr (T == QuantType::kQ4_0) {
    const __m512i z0 = load64<kPart>(p, left), z1 = load64<kPart>(p + 64, left - 64);
    const __m512i q03 = _mm512_permutex2var_epi16(z0, index_of(kQ4Quants03), z1);
    const __m512i low = _mm512_set1_epi8(0x0F);
    g.w[0] = _mm512_and_si512(q03, low);
    g.w[1] = _mm512_and_si512(_mm512_srli_epi16(q03, 4), low);
    if constexpr (has_upper(kPart)) {
      const __m512i z2 = load64<kPart>(p + 80, left - 80);
      const __m512i q47 = _mm512_permutex2var_epi16(z1, index_of(kQ4Quants47), z2);
      g.w[2] = _mm512_and_si512(q47, low);
      g.w[3] = _mm512_and_si512(_mm512_srli_epi16(q47, 4), low);
    }
    g.dw = _mm256_cvtph_ps(low128(_mm512_permutex2var_epi16(z0, index_of(kQ4Scales), z1)));
  } else {
    for (int l = 0; l < (has_upper(kPart) ? 4 : 2); ++l) {
      const unsigned char* blk = p + 2 * l * kQ8Bytes + 2;
      __m256i lo, hi;
      if constexpr (masked(kPart)) {
        lo = _mm256_maskz_loadu_epi8(2 * l < count ? ~__mmask32{0} : 0, blk);
        hi = _mm256_maskz_loadu_epi8(2 * l + 1 < count ? ~__mmask32{0} : 0, blk + kQ8Bytes);
      } else {
        lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk));
        hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + kQ8Bytes));
      }
      const __m512i w = _mm512_maskz_inserti64x4(~__mmask8{0}, _mm512_castsi256_si512(lo), hi, 1);
      if constexpr (kShifted) {
        g.w[l] = _mm512_xor_si512(w, _mm512_set1_epi8(static_cast<char>(0x80)));
      } else {
        g.neg[l] = _mm512_movepi8_mask(w);
        g.w[l] = _mm512_maskz_abs_epi8(~__mmask64{0}, w);
      }
    }
    const __m512i s03 = _mm512_permutex2var_epi16(load64<kPart>(p, left), index_of(kQ8Scales),
                                                  load64<kPart>(p + 64, left - 64));
    __m128i s47 = _mm_setzero_si128();
    if constexpr (has_upper(kPart))
      s47 = low128(_mm512_permutex2var_epi16(load64<kPart>(p + 136, left - 136), index_of(kQ8Scales),
                                             load64<kPart>(p + 200, left - 200)));
    g.dw = _mm256_cvtph_ps(_mm_unpacklo_epi64(low128(s03), s47));
  }
  return g;
}

// The activations of a group (32 · count bytes at q), in the order of group_weights' w.
template <QuantType T, Part kPart, bool kShifted>
POTOP_AVX512 POTOP_INLINE void group_activations(const GroupWeights& g, const int8_t* q, int count, __m512i x[4]) {
  constexpr int kRegisters = has_upper(kPart) ? 4 : 2;
  if constexpr (T == QuantType::kQ4_0) {
    // In nibble order (to_nibble_order): the x of blocks 0-3's low nibbles, of their high
    // nibbles, then of blocks 4-7's, each 16 · (blocks there) bytes.
    const int first = std::min(count, 4), second = count - first;
    if constexpr (!masked(kPart)) {
      for (int l = 0; l < 4; ++l) x[l] = _mm512_loadu_si512(q + 64 * l);
    } else {
      x[0] = _mm512_maskz_loadu_epi8(first_bytes(16 * first), q);
      x[1] = _mm512_maskz_loadu_epi8(first_bytes(16 * first), q + 16 * first);
      if constexpr (has_upper(kPart)) {
        x[2] = _mm512_maskz_loadu_epi8(first_bytes(16 * second), q + 128);
        x[3] = _mm512_maskz_loadu_epi8(first_bytes(16 * second), q + 128 + 16 * second);
      }
    }
  } else {
    const int left = count * kQuantBlock;
    for (int l = 0; l < kRegisters; ++l) {
      const __m512i v = load64<kPart>(q + 64 * l, left - 64 * l);
      x[l] = kShifted ? v : _mm512_mask_sub_epi8(v, g.neg[l], _mm512_setzero_si512(), v);
    }
  }
}

// The int32 partial sums to the eight block sums, in block order (exact: integers add in any
// order). q4_0: two registers, block j's in 128-bit lane j of the first (j < 4) or j - 4 of the
// second.
POTOP_AVX512 POTOP_INLINE __m256i reduce_quads(__m512i s03, __m512i s47) {
  // Per 128-bit lane j: (s03 0+2, s47 0+2, s03 1+3, s47 1+3), then (block j, block 4 + j, ...).
  __m512i a = _mm512_add_epi32(_mm512_maskz_unpacklo_epi32(kAll16, s03, s47),
                               _mm512_maskz_unpackhi_epi32(kAll16, s03, s47));
  a = _mm512_add_epi32(a, _mm512_maskz_shuffle_epi32(kAll16, a, _MM_PERM_BADC));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
  return low256(_mm512_maskz_permutexvar_epi32(kAll16, order, a));
}

// q8_0: four registers, block 2l's in the low half of p[l], block 2l + 1's in the high half.
POTOP_AVX512 POTOP_INLINE __m256i reduce_pairs(const __m512i* p) {
  // A transpose: per 128-bit lane, (p0, p1, p2, p3) each summed over the lane's four; lanes 0-1
  // then hold blocks 0, 2, 4, 6 and lanes 2-3 blocks 1, 3, 5, 7.
  const __m512i a = _mm512_add_epi32(_mm512_maskz_unpacklo_epi32(kAll16, p[0], p[1]),
                                     _mm512_maskz_unpackhi_epi32(kAll16, p[0], p[1]));
  const __m512i c = _mm512_add_epi32(_mm512_maskz_unpacklo_epi32(kAll16, p[2], p[3]),
                                     _mm512_maskz_unpackhi_epi32(kAll16, p[2], p[3]));
  __m512i e = _mm512_add_epi32(_mm512_maskz_unpacklo_epi64(kAll8, a, c), _mm512_maskz_unpackhi_epi64(kAll8, a, c));
  e = _mm512_add_epi32(e, _mm512_maskz_shuffle_i64x2(kAll8, e, e, _MM_SHUFFLE(2, 3, 0, 1)));
  const __m512i order = _mm512_setr_epi32(0, 8, 1, 9, 2, 10, 3, 11, 0, 0, 0, 0, 0, 0, 0, 0);
  return low256(_mm512_maskz_permutexvar_epi32(kAll16, order, e));
}

// add_group's float step, for AVX-512 (the same operations, so the same result).
template <QuantType T, Part kPart, bool kShifted>
POTOP_AVX512 POTOP_INLINE __m256 add_group_avx512(__m256 acc, __m256i sums, __m256 dw, const float* dx,
                                                  const int32_t* sx, int count) {
  const __mmask8 live = masked(kPart) ? static_cast<__mmask8>((1u << count) - 1) : static_cast<__mmask8>(0xFF);
  if constexpr (T == QuantType::kQ4_0 || kShifted) {
    constexpr int kLog2Offset = T == QuantType::kQ4_0 ? 3 : 7;  // 8 Σq, or 128 Σq
    sums = _mm256_sub_epi32(sums, _mm256_slli_epi32(_mm256_maskz_loadu_epi32(live, sx), kLog2Offset));
  }
  return _mm256_fmadd_ps(_mm256_mul_ps(dw, _mm256_maskz_loadu_ps(live, dx)), _mm256_cvtepi32_ps(sums), acc);
}

// The eight exact sums of a group (unsigned nibbles for q4_0), once for AVX-512 BW (maddubs, then
// madd by ones: no saturation, as in AVX2) and once for VNNI (vpdpbusd, four products at a time
// into int32, q8_0's weights SHIFTED by 128), and the row kernels over them. A macro because the
// target attribute differs.
#define POTOP_AVX512_ROW_KERNEL(NAME, TARGET, DOT_ADD, SHIFTED)                                                        \
  template <QuantType T, Part kPart>                                                                                   \
  TARGET POTOP_INLINE __m256i NAME##_group(const GroupWeights& g, const int8_t* q, int count) {                        \
    __m512i x[4];                                                                                                      \
    group_activations<T, kPart, SHIFTED>(g, q, count, x);                                                              \
    const __m512i zero = _mm512_setzero_si512();                                                                       \
    if constexpr (T == QuantType::kQ4_0) {                                                                             \
      return reduce_quads(DOT_ADD(DOT_ADD(zero, g.w[0], x[0]), g.w[1], x[1]),                                          \
                          has_upper(kPart) ? DOT_ADD(DOT_ADD(zero, g.w[2], x[2]), g.w[3], x[3]) : zero);               \
    } else {                                                                                                           \
      __m512i p[4] = {zero, zero, zero, zero};                                                                         \
      for (int l = 0; l < (has_upper(kPart) ? 4 : 2); ++l) p[l] = DOT_ADD(zero, g.w[l], x[l]);                         \
      return reduce_pairs(p);                                                                                          \
    }                                                                                                                  \
  }                                                                                                                    \
  template <QuantType T, Part kPart>                                                                                   \
  TARGET POTOP_INLINE __m256 NAME##_step(__m256 acc, const unsigned char* row, const int8_t* qx, const float* dx,      \
                                         const int32_t* sx, int b, int count) {                                        \
    const GroupWeights g = group_weights<T, kPart, SHIFTED>(row + b * block_bytes(T), count);                          \
    const __m256i sums = NAME##_group<T, kPart>(g, qx + b * kQuantBlock, count);                                       \
    return add_group_avx512<T, kPart, SHIFTED>(acc, sums, g.dw, dx + b, sx + b, count);                                \
  }                                                                                                                    \
  template <QuantType T>                                                                                               \
  TARGET float NAME(const unsigned char* row, const int8_t* qx, const float* dx, const int32_t* sx, int nb) {          \
    __m256 acc = _mm256_setzero_ps();                                                                                  \
    int b = 0;                                                                                                         \
    for (; b + 8 <= nb; b += 8) acc = NAME##_step<T, Part::kWhole>(acc, row, qx, dx, sx, b, 8);                        \
    if (nb - b > 4)                                                                                                    \
      acc = NAME##_step<T, Part::kFirst>(acc, row, qx, dx, sx, b, nb - b);                                             \
    else if (b < nb)                                                                                                   \
      acc = NAME##_step<T, Part::kFirstOfFour>(acc, row, qx, dx, sx, b, nb - b);                                       \
    return sum8(acc);                                                                                                  \
  }                                                                                                                    \
  /* Four rows of x, each group's weights decoded once (as rows4_dot_avx2; each result NAME's, bit for                 \
     bit). */                                                                                                          \
  template <QuantType T, Part kPart>                                                                                   \
  TARGET POTOP_INLINE void NAME##_step4(__m256* acc, const unsigned char* row, const int8_t* qx, const float* dx,      \
                                        const int32_t* sx, int b, int count, size_t K, size_t nbs) {                   \
    const GroupWeights g = group_weights<T, kPart, SHIFTED>(row + b * block_bytes(T), count);                          \
    for (int m = 0; m < 4; ++m) {                                                                                      \
      const int8_t* q = qx + m * K + static_cast<size_t>(b) * kQuantBlock;                                             \
      const __m256i sums = NAME##_group<T, kPart>(g, q, count);                                                        \
      acc[m] = add_group_avx512<T, kPart, SHIFTED>(acc[m], sums, g.dw, dx + m * nbs + b, sx + m * nbs + b, count);     \
    }                                                                                                                  \
  }                                                                                                                    \
  template <QuantType T>                                                                                               \
  TARGET void NAME##_rows4(const unsigned char* row, const int8_t* qx, const float* dx, const int32_t* sx,             \
                           int nb, size_t K, float* out) {                                                             \
    const size_t nbs = static_cast<size_t>(nb);                                                                        \
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};              \
    int b = 0;                                                                                                         \
    for (; b + 8 <= nb; b += 8) NAME##_step4<T, Part::kWhole>(acc, row, qx, dx, sx, b, 8, K, nbs);                     \
    if (nb - b > 4)                                                                                                    \
      NAME##_step4<T, Part::kFirst>(acc, row, qx, dx, sx, b, nb - b, K, nbs);                                          \
    else if (b < nb)                                                                                                   \
      NAME##_step4<T, Part::kFirstOfFour>(acc, row, qx, dx, sx, b, nb - b, K, nbs);                                    \
    for (int m = 0; m < 4; ++m) out[m] = sum8(acc[m]);                                                                 \
  }                                                                                                                    \
  /* The block sums of a row, for quant_block_sums_with (shifted q8_0 sums less their 128 Σq). */                      \
  template <QuantType T>                                                                                               \
  TARGET void NAME##_block_sums(const unsigned char* row, const int8_t* qx, const int32_t* sx, int nb,                 \
                                int32_t* out) {                                                                        \
    for (int b = 0; b < nb; b += 8) {                                                                                  \
      const int count = std::min(8, nb - b);                                                                           \
      alignas(32) int32_t sums[8];                                                                                     \
      const unsigned char* p = row + b * block_bytes(T);                                                               \
      const int8_t* q = qx + b * kQuantBlock;                                                                          \
      if (count == 8)                                                                                                  \
        _mm256_store_si256(reinterpret_cast<__m256i*>(sums),                                                           \
                           NAME##_group<T, Part::kWhole>(group_weights<T, Part::kWhole, SHIFTED>(p, 8), q, 8));        \
      else if (count > 4)                                                                                              \
        _mm256_store_si256(reinterpret_cast<__m256i*>(sums),                                                           \
                           NAME##_group<T, Part::kFirst>(group_weights<T, Part::kFirst, SHIFTED>(p, count), q, count)); \
      else                                                                                                             \
        _mm256_store_si256(reinterpret_cast<__m256i*>(sums),                                                           \
                           NAME##_group<T, Part::kFirstOfFour>(                                                        \
                               group_weights<T, Part::kFirstOfFour, SHIFTED>(p, count), q, count));                    \
      for (int j = 0; j < count; ++j)                                                                                  \
        out[b + j] = sums[j] - (T == QuantType::kQ8_0 && SHIFTED ? 128 * sx[b + j] : 0);                               \
    }                                                                                                                  \
  }

#define POTOP_DOT_ADD_BW(acc, w, x) \
  _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(w, x), _mm512_set1_epi16(1)))
POTOP_AVX512_ROW_KERNEL(row_dot_avx512, POTOP_AVX512, POTOP_DOT_ADD_BW, false)
POTOP_AVX512_ROW_KERNEL(row_dot_avx512vnni, POTOP_AVX512VNNI, _mm512_dpbusd_epi32, true)
#undef POTOP_DOT_ADD_BW
#undef POTOP_AVX512_ROW_KERNEL
#undef POTOP_INLINE

// The block kernels alone, for quant_block_sums_with.
// Block b of a row's last group (q in nibble order for q4_0).
POTOP_AVX2 int32_t block_sums_avx2_for_test(QuantType t, const unsigned char* row, const int8_t* q, int b, int nb) {
  const int first = nb / 8 * 8;
  const unsigned char* group = row + first * block_bytes(t);
  const int8_t* x = q + first * kQuantBlock;
  return hsum_epi32(t == QuantType::kQ8_0 ? block_avx2<QuantType::kQ8_0>(group, x, nb - first, b - first)
                                          : block_avx2<QuantType::kQ4_0>(group, x, nb - first, b - first));
}

POTOP_AVX2 void group_sums_avx2_for_test(QuantType t, const unsigned char* row, const int8_t* q, int b, int32_t* out) {
  const __m256i sums = t == QuantType::kQ8_0 ? group_sums_avx2<QuantType::kQ8_0>(row, q, b)
                                             : group_sums_avx2<QuantType::kQ4_0>(row, q, b);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + b), sums);
}

void group_sums_for_test(QuantIsa isa, QuantType t, const unsigned char* row, const int8_t* q, const int32_t* sum,
                         int nb, int32_t* out) {
  const bool q8 = t == QuantType::kQ8_0;
  if (isa == QuantIsa::kAvx512Vnni)
    q8 ? row_dot_avx512vnni_block_sums<QuantType::kQ8_0>(row, q, sum, nb, out)
       : row_dot_avx512vnni_block_sums<QuantType::kQ4_0>(row, q, sum, nb, out);
  else
    q8 ? row_dot_avx512_block_sums<QuantType::kQ8_0>(row, q, sum, nb, out)
       : row_dot_avx512_block_sums<QuantType::kQ4_0>(row, q, sum, nb, out);
}

// ---- Dequantizing, for the many-row path: the same floats as dequantize_row (d · q is one
// float product either way, and f16 converts exactly).
POTOP_AVX2 void dequantize_row_avx2(QuantType type, const unsigned char* row, int K, float* out) {
  if (type == QuantType::kF16) {
    int k = 0;
    for (; k + 8 <= K; k += 8)
      _mm256_storeu_ps(out + k, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * k))));
    for (; k < K; ++k) out[k] = load_f16(row + 2 * k);
    return;
  }
  const size_t bb = block_bytes(type);
  for (int b = 0; b < K / kQuantBlock; ++b) {
    const unsigned char* blk = row + b * bb;
    const __m256 d = _mm256_set1_ps(load_f16(blk));
    __m128i w0, w1;  // weights 0-15, 16-31 as int8
    if (type == QuantType::kQ8_0) {
      w0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
      w1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 18));
    } else {
      const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
      const __m128i mask = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
      w0 = _mm_sub_epi8(_mm_and_si128(raw, mask), eight);
      w1 = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(raw, 4), mask), eight);
    }
    float* o = out + b * kQuantBlock;
    _mm256_storeu_ps(o, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(w0))));
    _mm256_storeu_ps(o + 8, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(w0, 8)))));
    _mm256_storeu_ps(o + 16, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(w1))));
    _mm256_storeu_ps(o + 24, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(w1, 8)))));
  }
}

void dequantize_row_scalar(QuantType type, const unsigned char* row, int K, float* out) {
  dequantize_row(type, row, K, out);
}

// ---- Dispatch.

using F16Dot = float (*)(const void*, const float*, int);
using RowDot = float (*)(const unsigned char*, const int8_t*, const float*, const int32_t*, int);
// Four rows of x at once (x row m at qx + m·K): null where the ISA has none (scalar).
using Rows4Dot = void (*)(const unsigned char*, const int8_t*, const float*, const int32_t*, int, size_t, float*);
using QuantizeX = void (*)(const float*, int, int8_t*, float*, int32_t*);
using Dequantize = void (*)(QuantType, const unsigned char*, int, float*);

struct Kernels {
  F16Dot f16;
  RowDot q8, q4;
  QuantizeX quantize;
  Dequantize dequantize;
  Rows4Dot q8x4 = nullptr, q4x4 = nullptr;
  // Rearranges a row of quantized activations for q4 and q4x4 (to_nibble_order), or null.
  void (*q4_order)(int8_t*, int) = nullptr;
  RowDot of(QuantType t) const { return t == QuantType::kQ8_0 ? q8 : q4; }
  Rows4Dot rows4_of(QuantType t) const { return t == QuantType::kQ8_0 ? q8x4 : q4x4; }
};

float row_dot_scalar_q8(const unsigned char* r, const int8_t* q, const float* d, const int32_t* s, int nb) {
  return row_dot_scalar(QuantType::kQ8_0, r, q, d, s, nb);
}
float row_dot_scalar_q4(const unsigned char* r, const int8_t* q, const float* d, const int32_t* s, int nb) {
  return row_dot_scalar(QuantType::kQ4_0, r, q, d, s, nb);
}

Kernels kernels_of(QuantIsa isa) {
  switch (isa) {
    case QuantIsa::kAvx512Vnni:
      return {dot_f16_avx512, row_dot_avx512vnni<QuantType::kQ8_0>, row_dot_avx512vnni<QuantType::kQ4_0>, quantize_x_avx2,
              dequantize_row_avx2, row_dot_avx512vnni_rows4<QuantType::kQ8_0>, row_dot_avx512vnni_rows4<QuantType::kQ4_0>,
              to_nibble_order};
    case QuantIsa::kAvx512:
      return {dot_f16_avx512, row_dot_avx512<QuantType::kQ8_0>, row_dot_avx512<QuantType::kQ4_0>, quantize_x_avx2,
              dequantize_row_avx2, row_dot_avx512_rows4<QuantType::kQ8_0>, row_dot_avx512_rows4<QuantType::kQ4_0>,
              to_nibble_order};
    case QuantIsa::kAvx2:
      return {dot_f16_avx2, row_dot_avx2<QuantType::kQ8_0>, row_dot_avx2<QuantType::kQ4_0>, quantize_x_avx2,
              dequantize_row_avx2, rows4_dot_avx2<QuantType::kQ8_0>, rows4_dot_avx2<QuantType::kQ4_0>, to_nibble_order};
    case QuantIsa::kScalar: break;
  }
  return {dot_f16_scalar, row_dot_scalar_q8, row_dot_scalar_q4, quantize_x_scalar, dequantize_row_scalar};
}

QuantIsa best_isa() {
  for (QuantIsa isa : {QuantIsa::kAvx512Vnni, QuantIsa::kAvx512, QuantIsa::kAvx2})
    if (quant_isa_available(isa)) return isa;
  return QuantIsa::kScalar;
}

const Kernels& best_kernels() {
  static const Kernels k = kernels_of(best_isa());
  return k;
}

// The calling thread's buffers for M rows of quantized activations.
struct QXBuffers {
  std::vector<int8_t> q;
  std::vector<float> d;
  std::vector<int32_t> s;
};

// The rows in the order k's q4_0 kernels read them when `type` is q4_0 and `nibble_order`.
QX quantize_rows(const Kernels& k, QuantType type, const float* X, int M, int K, bool nibble_order = true) {
  thread_local QXBuffers buf;
  const size_t nb = static_cast<size_t>(K / kQuantBlock), rows = static_cast<size_t>(M);
  if (buf.q.size() < rows * K) buf.q.resize(rows * K);
  if (buf.d.size() < rows * nb) buf.d.resize(rows * nb), buf.s.resize(rows * nb);
  for (size_t m = 0; m < rows; ++m) {
    k.quantize(X + m * K, K, buf.q.data() + m * K, buf.d.data() + m * nb, buf.s.data() + m * nb);
    if (type == QuantType::kQ4_0 && k.q4_order && nibble_order) k.q4_order(buf.q.data() + m * K, K);
  }
  return {buf.q.data(), buf.d.data(), buf.s.data()};
}

// Below ~32 KiB of weights a parallel region costs more than it saves.
bool worth_threads(size_t weight_bytes, int M) {
  return weight_bytes * static_cast<size_t>(std::max(M, 1)) >= (1 << 15) && !omp_in_parallel();
}

// From this many rows of X on, dequantizing W panel by panel and multiplying in f32 (sgemm) is
// faster than the integer kernels, for W as rows (a model's q8_0 and q4_0 matrices on AVX-512
// VNNI are interleaved instead, and their kernel takes any number of rows). Measured on Zen 4,
// one thread (bench/quant_kernels.cpp): the integer kernels (four rows of X per decoded block)
// hold 90-140 GFLOP/s, the panels' sgemm beats them from M = 32 at K = 768 but not at K > 1024
// (q8_0, M = 64: 2.4 ms against 1.9 for a whole-matrix sgemm at K = 3072). f16 weights have no
// integer kernel, and their float one re-reads W's row for each row of X: the panels win from
// M = 32 at every K. A row whose blocks are not whole groups of eight (384 inputs: 12 blocks)
// spends much of its integer time on its last few blocks, and there the panels win from a few
// rows on: at K = 384, N = 1152, M = 16, q8_0 took 144 µs as panels against 358 µs in integers
// (f32 sgemm 94). Panels of 256 rows: with 64, sgemm's calls were too small (223 µs there).
constexpr int kPanelRows = 256;
int many_rows(QuantType type, int K) {
  if (type == QuantType::kF16) return 32;
  if (K > 1024) return std::numeric_limits<int>::max();
  if ((K / kQuantBlock) % 8 != 0) return type == QuantType::kQ8_0 ? 4 : 8;
  return 32;
}

void matmul(const Kernels& k, QuantType type, const void* W, int N, int K, const float* X, int M, float* Y,
            bool accumulate) {
  const size_t row_bytes = quant_row_bytes(type, K);
  if (M <= 0 || N <= 0) return;
  const auto* rows = static_cast<const unsigned char*>(W);
  const bool parallel = worth_threads(row_bytes * static_cast<size_t>(N), M);
  const size_t n_out = static_cast<size_t>(N);
  if (M >= many_rows(type, K)) {
    // Panels of kPanelRows rows of W to f32, each multiplied by one single-threaded sgemm (OpenBLAS
    // and oneDNN run on one thread inside a parallel region). The panels are the same whatever
    // the thread count, and sgemm sums along K within one call: so are the results.
    const int panels = (N + kPanelRows - 1) / kPanelRows;
#pragma omp parallel for schedule(static) if (parallel)
    for (int p = 0; p < panels; ++p) {
      const int n0 = p * kPanelRows, np = std::min(kPanelRows, N - n0);
      struct PanelTile;
      float* tile = thread_scratch<PanelTile>(0, static_cast<size_t>(np) * K);
      for (int r = 0; r < np; ++r)
        k.dequantize(type, rows + static_cast<size_t>(n0 + r) * row_bytes, K, tile + static_cast<size_t>(r) * K);
      sgemm(false, true, M, np, K, 1.0f, X, K, tile, K, accumulate ? 1.0f : 0.0f, Y + n0, N);
    }
    return;
  }
  if (type == QuantType::kF16) {
#pragma omp parallel for schedule(static) if (parallel)
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < M; ++m) {
        const float v = k.f16(rows + static_cast<size_t>(n) * row_bytes, X + static_cast<size_t>(m) * K, K);
        float& y = Y[m * n_out + n];
        y = accumulate ? y + v : v;
      }
    return;
  }
  const int nb = K / kQuantBlock;
  const QX qx = quantize_rows(k, type, X, M, K);
  const RowDot dot = k.of(type);
  const Rows4Dot dot4 = k.rows4_of(type);
  // Each row of W is read from memory once and stays in L1 while the M rows of x go past it, four
  // at a time where the ISA decodes a block once for four (the same results as one at a time).
#pragma omp parallel for schedule(static) if (parallel)
  for (int n = 0; n < N; ++n) {
    const unsigned char* w = rows + static_cast<size_t>(n) * row_bytes;
    int m = 0;
    if (dot4)
      for (; m + 4 <= M; m += 4) {
        const size_t mb = static_cast<size_t>(m) * nb;
        float v[4];
        dot4(w, qx.q + static_cast<size_t>(m) * K, qx.d + mb, qx.s + mb, nb, static_cast<size_t>(K), v);
        for (int i = 0; i < 4; ++i) {
          float& y = Y[(m + i) * n_out + n];
          y = accumulate ? y + v[i] : v[i];
        }
      }
    for (; m < M; ++m) {
      const size_t mb = static_cast<size_t>(m) * nb;
      const float v = dot(w, qx.q + static_cast<size_t>(m) * K, qx.d + mb, qx.s + mb, nb);
      float& y = Y[m * n_out + n];
      y = accumulate ? y + v : v;
    }
  }
}

}  // namespace

bool quant_isa_available(QuantIsa isa) {
  __builtin_cpu_init();
  // Every CPU with AVX2 has F16C (Intel since Ivy Bridge, AMD since Piledriver, both earlier than
  // their AVX2), and clang's __builtin_cpu_supports does not know "f16c".
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
  switch (isa) {
    case QuantIsa::kScalar: return true;
    case QuantIsa::kAvx2: return avx2;
    case QuantIsa::kAvx512: return avx512;
    case QuantIsa::kAvx512Vnni: return avx512 && __builtin_cpu_supports("avx512vnni");
  }
  return false;
}

const char* quant_isa_name() {
  switch (best_isa()) {
    case QuantIsa::kAvx512Vnni: return "avx512vnni";
    case QuantIsa::kAvx512: return "avx512";
    case QuantIsa::kAvx2: return "avx2";
    case QuantIsa::kScalar: break;
  }
  return "scalar";
}

void quantize_activations(const float* x, int K, int8_t* q, float* d, int32_t* sum) {
  POTOP_CHECK(quant_row_fits(QuantType::kQ8_0, K), "activations of " + std::to_string(K) + " are not whole blocks");
  best_kernels().quantize(x, K, q, d, sum);
}

float quant_dot_with(QuantIsa isa, QuantType type, const void* row, const float* x, int K) {
  POTOP_CHECK(quant_isa_available(isa), "this CPU does not run that kernel");
  float y = 0.0f;
  matmul(kernels_of(isa), type, row, 1, K, x, 1, &y, false);
  return y;
}

void quant_matmul_with(QuantIsa isa, QuantType type, const void* W, int N, int K, const float* X, int M, float* Y,
                       bool accumulate) {
  POTOP_CHECK(quant_isa_available(isa), "this CPU does not run that kernel");
  matmul(kernels_of(isa), type, W, N, K, X, M, Y, accumulate);
}

void quant_block_sums_with(QuantIsa isa, QuantType type, const void* row, const int8_t* q, const int32_t* sum, int K,
                           int32_t* out) {
  POTOP_CHECK(quant_isa_available(isa), "this CPU does not run that kernel");
  POTOP_CHECK(type != QuantType::kF16, "f16 has no integer kernel");
  (void)quant_row_bytes(type, K);
  const auto* r = static_cast<const unsigned char*>(row);
  const size_t bb = block_bytes(type);
  const int nb = K / kQuantBlock;
  std::vector<int8_t> ordered(q, q + K);  // as the vector kernels take x (to_nibble_order)
  if (type == QuantType::kQ4_0 && isa != QuantIsa::kScalar) to_nibble_order(ordered.data(), K);
  int b = 0;
  if (isa == QuantIsa::kAvx512 || isa == QuantIsa::kAvx512Vnni) {
    // Through the group kernels, as the row kernels use them (the last blocks masked).
    group_sums_for_test(isa, type, r, ordered.data(), sum, nb, out);
    b = nb;
  }
  if (isa == QuantIsa::kAvx2) {  // the whole groups as row_dot_avx2 takes them, then block by block
    for (; b + 8 <= nb; b += 8) group_sums_avx2_for_test(type, r, ordered.data(), b, out);
    for (; b < nb; ++b) out[b] = block_sums_avx2_for_test(type, r, ordered.data(), b, nb);
  }
  for (; b < nb; ++b) out[b] = block_sum_scalar(type, r + b * bb, q + b * kQuantBlock);
  if (type == QuantType::kQ4_0 && isa != QuantIsa::kScalar)
    for (b = 0; b < nb; ++b) out[b] -= 8 * sum[b];
}

float quant_dot(QuantType type, const void* row, const float* x, int K) {
  float y = 0.0f;
  matmul(best_kernels(), type, row, 1, K, x, 1, &y, false);
  return y;
}

void quant_gemv(QuantType type, const void* W, int N, int K, const float* x, float* y) {
  matmul(best_kernels(), type, W, N, K, x, 1, y, false);
}

void quant_gemv(QuantType type, const void* W, int N, int K, const float* x, float* y, bool accumulate) {
  matmul(best_kernels(), type, W, N, K, x, 1, y, accumulate);
}

void quant_matmul(QuantType type, const void* W, int N, int K, const float* X, int M, float* Y, bool accumulate) {
  matmul(best_kernels(), type, W, N, K, X, M, Y, accumulate);
}

QuantLayout quant_best_layout(QuantType type) {
  return type != QuantType::kF16 && quant_interleaved_available() ? QuantLayout::kInterleaved : QuantLayout::kRows;
}

void quant_matmul(QuantType type, QuantLayout layout, const void* W, int N, int K, const float* X, int M, float* Y,
                  bool accumulate) {
  const Kernels& k = best_kernels();
  if (layout == QuantLayout::kRows) return matmul(k, type, W, N, K, X, M, Y, accumulate);
  if (M <= 0 || N <= 0) return;
  if (!quant_interleaved_available()) {
    const std::vector<uint8_t> rows = quant_interleaved_to_rows(type, static_cast<const uint8_t*>(W), N, K);
    return matmul(k, type, rows.data(), N, K, X, M, Y, accumulate);
  }
  const QX qx = quantize_rows(k, type, X, M, K, /*nibble_order=*/false);
  quant_matmul_interleaved(type, W, N, K, qx.q, qx.d, qx.s, M, Y, accumulate,
                           worth_threads(quant_interleaved_bytes(type, N, K), M));
}

}  // namespace potop
