#include "kernels/quant_interleaved.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "kernels/prefetch.h"

namespace potop {

namespace {

#define POTOP_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

constexpr size_t kRegisterBytes = 64;
constexpr size_t kScaleBytes = 2 * kStripeRows;  // one block's sixteen f16 scales

// Registers of quants per block: 32 bytes a row for q8_0, 16 for q4_0, four bytes a lane.
constexpr int registers_of(QuantType t) { return t == QuantType::kQ8_0 ? 8 : 4; }

void check_type(QuantType type) {
  POTOP_CHECK(type == QuantType::kQ8_0 || type == QuantType::kQ4_0, "only q8_0 and q4_0 matrices go in stripes");
}

int stripes_of(int N) { return (N + kStripeRows - 1) / kStripeRows; }

// Where row r's block b keeps its scale and the four bytes of register s, within a stripe.
struct StripeIndex {
  int nb, registers;
  size_t scale(int b, int r) const { return (static_cast<size_t>(b) * kStripeRows + r) * 2; }
  size_t quants(int b, int s, int r) const {
    return static_cast<size_t>(nb) * kScaleBytes + (static_cast<size_t>(b) * registers + s) * kRegisterBytes + 4 * r;
  }
};

// Calls piece(offset in the rows layout, offset in the stripes, bytes, whether q8_0's + 128 applies)
// for each scale and each four quant bytes of N rows: the one map that both directions follow.
template <class F>
void for_each_piece(QuantType type, int N, int K, F piece) {
  check_type(type);
  const size_t row_bytes = quant_row_bytes(type, K), stripe_bytes = kStripeRows * row_bytes;
  const size_t block = quant_row_bytes(type, kQuantBlock);
  const StripeIndex at{K / kQuantBlock, registers_of(type)};
  for (int n = 0; n < N; ++n) {
    const size_t stripe = static_cast<size_t>(n / kStripeRows) * stripe_bytes;
    const int r = n % kStripeRows;
    for (int b = 0; b < at.nb; ++b) {
      const size_t row = static_cast<size_t>(n) * row_bytes + b * block;
      piece(row, stripe + at.scale(b, r), 2, false);
      for (int s = 0; s < at.registers; ++s)
        piece(row + 2 + 4 * s, stripe + at.quants(b, s, r), 4, type == QuantType::kQ8_0);
    }
  }
}

// `bytes` (at most 4) from src to dst, flipping each byte's top bit when `shift`: q8_0's signed
// weight to weight + 128 and back (the flip is its own inverse).
void copy_piece(uint8_t* dst, const uint8_t* src, size_t bytes, bool shift) {
  uint32_t v = 0;
  std::memcpy(&v, src, bytes);
  if (shift) v ^= 0x80808080u;
  std::memcpy(dst, &v, bytes);
}

// ---- The kernel.

constexpr __mmask16 kAll = 0xFFFF;  // full-mask maskz_ forms: g++ 12 warns on the plain ones (bug 105593)

POTOP_VNNI inline __m512i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Block b's weights of the sixteen rows, ready for vpdpbusd: q8_0's eight registers as stored,
// q4_0's four as low nibbles (w[0..3]) and as high nibbles in place (w[4..7]).
template <QuantType T>
POTOP_VNNI inline void load_block(const unsigned char* quants, __m512i* w) {
  if constexpr (T == QuantType::kQ8_0) {
    for (int s = 0; s < 8; ++s) w[s] = _mm512_loadu_si512(quants + s * kRegisterBytes);
  } else {
    const __m512i low = _mm512_set1_epi8(0x0F);
    for (int s = 0; s < 4; ++s) {
      const __m512i v = _mm512_loadu_si512(quants + s * kRegisterBytes);
      w[s] = _mm512_and_si512(v, low);
      w[4 + s] = _mm512_maskz_andnot_epi32(kAll, low, v);
    }
  }
}

// The sixteen rows' exact integer sums of one block against x's block (32 bytes at x, Σx = sx),
// in two chains so that two vpdpbusd run at once.
template <QuantType T>
POTOP_VNNI inline __m512i block_sums(const __m512i* w, const int8_t* x, int32_t sx) {
  __m512i a = _mm512_setzero_si512(), c = _mm512_setzero_si512();
  if constexpr (T == QuantType::kQ8_0) {
    for (int s = 0; s < 8; s += 2) {
      a = _mm512_dpbusd_epi32(a, w[s], broadcast4(x + 4 * s));
      c = _mm512_dpbusd_epi32(c, w[s + 1], broadcast4(x + 4 * s + 4));
    }
    return _mm512_sub_epi32(_mm512_add_epi32(a, c), _mm512_set1_epi32(128 * sx));
  } else {
    for (int s = 0; s < 4; ++s) {
      a = _mm512_dpbusd_epi32(a, w[s], broadcast4(x + 4 * s));           // weights j < 16
      c = _mm512_dpbusd_epi32(c, w[4 + s], broadcast4(x + 16 + 4 * s));  // weights j + 16, times 16
    }
    return _mm512_sub_epi32(_mm512_add_epi32(a, _mm512_maskz_srai_epi32(kAll, c, 4)), _mm512_set1_epi32(8 * sx));
  }
}

// kRows rows of x (row m: q + m·K, d and s + m·nb) against one stripe: their 16 results each to
// out[m·16 ..]. Blocks go in groups of eight so that partial sum b mod 8 is a register.
template <QuantType T, int kRows>
POTOP_VNNI void stripe_against_rows(const unsigned char* stripe, int nb, const int8_t* q, const float* d,
                                    const int32_t* s, size_t K, float* out) {
  constexpr size_t block_quants = registers_of(T) * kRegisterBytes;
  const unsigned char* quants = stripe + static_cast<size_t>(nb) * kScaleBytes;
  const size_t nbs = static_cast<size_t>(nb);
  __m512 part[kRows][8];
  for (auto& row : part)
    for (__m512& p : row) p = _mm512_setzero_ps();
  for (int b0 = 0; b0 < nb; b0 += 8) {
    const int count = std::min(8, nb - b0);
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) {
      if (l >= count) break;
      const int b = b0 + l;
      __m512i w[8];
      if constexpr (kRows == 1) prefetch_lines(quants + b * block_quants + kPrefetchAhead, block_quants);  // prefetch.h
      load_block<T>(quants + b * block_quants, w);
      const auto* scales = reinterpret_cast<const __m256i*>(stripe + b * kScaleBytes);
      const __m512 dw = _mm512_maskz_cvtph_ps(kAll, _mm256_loadu_si256(scales));
      for (int m = 0; m < kRows; ++m) {
        const size_t mb = m * nbs + b;
        const __m512i sums = block_sums<T>(w, q + m * K + static_cast<size_t>(b) * kQuantBlock, s[mb]);
        const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(d[mb]));
        part[m][l] = _mm512_fmadd_ps(scale, _mm512_maskz_cvtepi32_ps(kAll, sums), part[m][l]);
      }
    }
  }
  for (int m = 0; m < kRows; ++m) {  // quant.h's order: ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7))
    const __m512* p = part[m];
    const __m512 even = _mm512_add_ps(_mm512_add_ps(p[0], p[4]), _mm512_add_ps(p[2], p[6]));
    const __m512 odd = _mm512_add_ps(_mm512_add_ps(p[1], p[5]), _mm512_add_ps(p[3], p[7]));
    _mm512_storeu_ps(out + m * kStripeRows, _mm512_add_ps(even, odd));
  }
}

// Every row of x against stripe p: columns 16p .. of Y. (No vector types in its signature: clang
// compiles the OpenMP region that calls it without this file's target attributes.)
template <QuantType T>
POTOP_VNNI void stripe_job(const unsigned char* stripe, int p, int N, int K, const int8_t* q, const float* d,
                           const int32_t* s, int M, float* Y, bool accumulate) {
  // Rows of x per pass over the stripe's blocks: each block is decoded once for them. Measured at
  // GPT-2 124M's shapes, M = 512, 2 threads of a Zen 5 (GOP/s at 1 / 2 / 3 / 4 / 6 rows are not
  // monotonic: g++ spills the 8·rows partial sums differently): q8_0 556 at 2 rows, 427 at 4;
  // q4_0 747 at 4, 599 at 2.
  constexpr int kTile = T == QuantType::kQ8_0 ? 2 : 4;
  const int nb = K / kQuantBlock, n0 = p * kStripeRows, width = std::min(kStripeRows, N - n0);
  const size_t Ks = static_cast<size_t>(K), nbs = static_cast<size_t>(nb);
  alignas(64) float v[kTile * kStripeRows];
  for (int m = 0; m < M;) {
    const int rows = M - m >= kTile ? kTile : 1;
    if (rows == kTile)
      stripe_against_rows<T, kTile>(stripe, nb, q + m * Ks, d + m * nbs, s + m * nbs, Ks, v);
    else
      stripe_against_rows<T, 1>(stripe, nb, q + m * Ks, d + m * nbs, s + m * nbs, Ks, v);
    for (int i = 0; i < rows; ++i) {
      float* y = Y + static_cast<size_t>(m + i) * N + n0;
      const float* r = v + i * kStripeRows;
      if (accumulate)
        for (int c = 0; c < width; ++c) y[c] += r[c];
      else
        std::copy(r, r + width, y);
    }
    m += rows;
  }
}

template <QuantType T>
void matmul_stripes(const unsigned char* W, int N, int K, const int8_t* q, const float* d, const int32_t* s, int M,
                    float* Y, bool accumulate, bool parallel) {
  const size_t stripe_bytes = kStripeRows * quant_row_bytes(T, K);
  const int stripes = stripes_of(N);
#pragma omp parallel for schedule(static) if (parallel)
  for (int p = 0; p < stripes; ++p) stripe_job<T>(W + p * stripe_bytes, p, N, K, q, d, s, M, Y, accumulate);
}

}  // namespace

size_t quant_interleaved_bytes(QuantType type, int N, int K) {
  check_type(type);
  return static_cast<size_t>(stripes_of(N)) * kStripeRows * quant_row_bytes(type, K);
}

std::vector<uint8_t> quant_rows_to_interleaved(QuantType type, const uint8_t* rows, int N, int K) {
  // The padding rows stay zero bytes: scale 0, so they add nothing and dequantize to zeros.
  std::vector<uint8_t> out(quant_interleaved_bytes(type, N, K), 0);
  for_each_piece(type, N, K, [&](size_t row, size_t stripe, size_t bytes, bool shift) {
    copy_piece(out.data() + stripe, rows + row, bytes, shift);
  });
  return out;
}

std::vector<uint8_t> quant_interleaved_to_rows(QuantType type, const uint8_t* stripes, int N, int K) {
  std::vector<uint8_t> out(static_cast<size_t>(N) * quant_row_bytes(type, K));
  for_each_piece(type, N, K, [&](size_t row, size_t stripe, size_t bytes, bool shift) {
    copy_piece(out.data() + row, stripes + stripe, bytes, shift);
  });
  return out;
}

bool quant_interleaved_available() { return quant_isa_available(QuantIsa::kAvx512Vnni); }

void quant_matmul_interleaved(QuantType type, const void* W, int N, int K, const int8_t* q, const float* d,
                              const int32_t* s, int M, float* Y, bool accumulate, bool parallel) {
  check_type(type);
  const auto* w = static_cast<const unsigned char*>(W);
  if (type == QuantType::kQ8_0)
    matmul_stripes<QuantType::kQ8_0>(w, N, K, q, d, s, M, Y, accumulate, parallel);
  else
    matmul_stripes<QuantType::kQ4_0>(w, N, K, q, d, s, M, Y, accumulate, parallel);
}

}  // namespace potop
