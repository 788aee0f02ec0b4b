#include "kernels/quant_batch.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace potop {

namespace {

#define POTOP_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

// Full-mask maskz_ forms of some intrinsics below: g++ 12 builds the plain ones on an undefined
// vector and warns (-Wmaybe-uninitialized), which the CI's -Werror build refuses.

constexpr int kLanes = 16;  // rows of x per register
constexpr int kSteps = 8;   // four-byte steps per block of 32

// Sixteen rows of x (fewer in the last tile: the other lanes zero), transposed for the kernel.
struct XTile {
  std::vector<int32_t> steps;  // [block][step][lane]: four bytes of that row's block
  std::vector<float> scale;    // [block][lane]: d_x
  std::vector<int32_t> offset; // [block][lane]: o·Σx, what the unsigned weights added
};

void transpose_x(const int8_t* q, const float* d, const int32_t* s, int K, int rows, int32_t o, XTile& t) {
  const int nb = K / kQuantBlock;
  t.steps.assign(static_cast<size_t>(nb) * kSteps * kLanes, 0);
  t.scale.assign(static_cast<size_t>(nb) * kLanes, 0.0f);
  t.offset.assign(static_cast<size_t>(nb) * kLanes, 0);
  for (int m = 0; m < rows; ++m)
    for (int b = 0; b < nb; ++b) {
      const int8_t* block = q + static_cast<size_t>(m) * K + static_cast<size_t>(b) * kQuantBlock;
      for (int j = 0; j < kSteps; ++j)
        std::memcpy(&t.steps[(static_cast<size_t>(b) * kSteps + j) * kLanes + m], block + 4 * j, 4);
      t.scale[static_cast<size_t>(b) * kLanes + m] = d[static_cast<size_t>(m) * nb + b];
      t.offset[static_cast<size_t>(b) * kLanes + m] = o * s[static_cast<size_t>(m) * nb + b];
    }
}

POTOP_VNNI inline __m512i broadcast4(const unsigned char* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Block b's sixteen exact sums S + o·Σx for one weight block (its quants at `w`), in two halves
// so that two chains of vpdpbusd run at once (integers: the split changes nothing). The block's
// 32 unsigned weights are made once in a 128/256-bit register and staged in memory, and each
// step broadcasts its four from there: a broadcast from memory costs a load, where making the
// weights in every 512-bit step would cost two or three vector operations each.
template <QuantType T>
POTOP_VNNI inline __m512i block_sums(const unsigned char* w, const int32_t* steps) {
  alignas(32) unsigned char staged[kQuantBlock];
  if constexpr (T == QuantType::kQ8_0) {  // w + 128: the signed weights as unsigned bytes
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
    _mm256_store_si256(reinterpret_cast<__m256i*>(staged), _mm256_xor_si256(q, _mm256_set1_epi8(static_cast<char>(0x80))));
  } else {  // byte k holds weight k (low nibble) and weight k + 16 (high)
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w)), low = _mm_set1_epi8(0x0F);
    _mm_store_si128(reinterpret_cast<__m128i*>(staged), _mm_and_si128(q, low));
    _mm_store_si128(reinterpret_cast<__m128i*>(staged + 16), _mm_and_si128(_mm_srli_epi16(q, 4), low));
  }
  __m512i even = _mm512_setzero_si512(), odd = _mm512_setzero_si512();
  for (int j = 0; j < kSteps; j += 2) {
    even = _mm512_dpbusd_epi32(even, broadcast4(staged + 4 * j), _mm512_loadu_si512(steps + j * kLanes));
    odd = _mm512_dpbusd_epi32(odd, broadcast4(staged + 4 * j + 4), _mm512_loadu_si512(steps + (j + 1) * kLanes));
  }
  return _mm512_add_epi32(even, odd);
}

// One weight row against the tile's sixteen rows of x: quant.h's float step, lane by lane; the
// sixteen results to out. (No vector types in its signature: clang compiles the OpenMP region
// that calls it without this file's target attributes.)
template <QuantType T>
POTOP_VNNI void row_against_tile(const unsigned char* row, int nb, const XTile& t, float* out) {
  constexpr size_t bb = T == QuantType::kQ8_0 ? sizeof(BlockQ8_0) : sizeof(BlockQ4_0);
  __m512 part[8];
  for (__m512& p : part) p = _mm512_setzero_ps();
  for (int b = 0; b < nb; ++b) {
    const unsigned char* blk = row + static_cast<size_t>(b) * bb;
    const size_t lane0 = static_cast<size_t>(b) * kLanes;
    const __m512i sums = _mm512_sub_epi32(block_sums<T>(blk + 2, t.steps.data() + lane0 * kSteps),
                                          _mm512_loadu_si512(t.offset.data() + lane0));
    uint16_t h;
    std::memcpy(&h, blk, 2);
    const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(h)), _mm512_loadu_ps(t.scale.data() + lane0));
    part[b & 7] = _mm512_fmadd_ps(scale, _mm512_maskz_cvtepi32_ps(0xFFFF, sums), part[b & 7]);
  }
  _mm512_storeu_ps(out, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(part[0], part[4]), _mm512_add_ps(part[2], part[6])),
                                      _mm512_add_ps(_mm512_add_ps(part[1], part[5]), _mm512_add_ps(part[3], part[7]))));
}

template <QuantType T>
void matmul_batch(const unsigned char* W, int N, int K, const int8_t* q, const float* d, const int32_t* s,
                             int M, float* Y, bool accumulate, bool parallel) {
  constexpr int32_t o = T == QuantType::kQ8_0 ? 128 : 8;
  const int nb = K / kQuantBlock;
  const size_t row_bytes = quant_row_bytes(T, K), n_out = static_cast<size_t>(N);
  thread_local XTile tile;
  for (int m0 = 0; m0 < M; m0 += kLanes) {
    const int rows = std::min(kLanes, M - m0);
    transpose_x(q + static_cast<size_t>(m0) * K, d + static_cast<size_t>(m0) * nb, s + static_cast<size_t>(m0) * nb, K,
                rows, o, tile);
    const XTile& t = tile;
#pragma omp parallel for schedule(static) if (parallel)
    for (int n = 0; n < N; ++n) {
      float v[kLanes];
      row_against_tile<T>(W + static_cast<size_t>(n) * row_bytes, nb, t, v);
      for (int m = 0; m < rows; ++m) {
        float& y = Y[(m0 + m) * n_out + n];
        y = accumulate ? y + v[m] : v[m];
      }
    }
  }
}

}  // namespace

bool quant_batch_available() { return quant_isa_available(QuantIsa::kAvx512Vnni); }

void quant_matmul_batch(QuantType type, const void* W, int N, int K, const int8_t* q, const float* d, const int32_t* s,
                        int M, float* Y, bool accumulate, bool parallel) {
  const auto* w = static_cast<const unsigned char*>(W);
  if (type == QuantType::kQ8_0)
    matmul_batch<QuantType::kQ8_0>(w, N, K, q, d, s, M, Y, accumulate, parallel);
  else
    matmul_batch<QuantType::kQ4_0>(w, N, K, q, d, s, M, Y, accumulate, parallel);
}

}  // namespace potop
