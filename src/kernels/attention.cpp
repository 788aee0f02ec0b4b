// Multi-head scaled dot-product attention (see attention.h).
//
// Work split: every (batch, key/value head) pair is one job; OpenMP hands the jobs to threads
// statically and a job runs start to finish on one thread, the query heads of its group one after
// the other. Jobs write disjoint memory (their heads' rows of stats and att, their own D-wide
// column slices of out / dq / dk / dv), so there are no races and the result does not even
// depend on the thread count. A group packs its keys and values once for all its query heads,
// and its heads add into one dk, dv sum in head order; with Hkv = H a group is one head.
// Generation, which packs nothing, makes each query head a job of its own instead.
//
// Inside a job, queries go in blocks of kQueryBlock:
//   forward   S = Q Kᵀ;  E = exp(S / √D - m) with m each row's max, keeping m and 1 / rowsum(E);
//             O = dropout(E) V / rowsum(E) = dropout(P) V, P = softmax(S / √D): dividing the D
//             outputs of a row costs less than dividing its Tk probabilities
//   backward  S = Q Kᵀ again and P = E / rowsum(E) from the saved statistics;  dP = dO Vᵀ;
//             dS = P ⊙ (dP - rowsum(P ⊙ dP)) / √D;  dV += Pᵀ dO;  dK += dSᵀ Q;  dQ += dS K
//             (query blocks last to first, so the first block seen writes dK, dV and the rest add)
// The products run on panel_matmul: its right-hand operand is first packed into panels kPanel
// columns (two SIMD vectors) wide, stored row after row, and a tile of kTileRows × kPanel results
// stays in registers while the sum runs down a panel. What the masks zero out is skipped: masked
// keys are never touched, so causal attention does half the work of the full Tq × Tk square.
// Per-thread scratch (packed operands, one block of scores) grows once and is reused, so training
// allocates nothing in steady state. Generation (fewer than kTileRows new queries) skips the
// packing: each query walks the cached keys and values directly.
//
// Dropout never stores its mask: element (b, h, i, j) of att is kept iff
// counter_uniform(seed, ((b*H + h)*Tq + i)*Tk + j) >= p, recomputed by the backward pass.
#include "kernels/attention.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/error.h"
#include "core/rng.h"
#include "core/scratch.h"
#include "kernels/prefetch.h"
#include "kernels/quant.h"
#include "kernels/vec_math.h"

namespace potop {

namespace {

constexpr int kQueryBlock = 64;  // query rows per block
constexpr int kTileRows = 6;     // rows of the result held in registers by panel_tile

// ---------------------------------------------------------------------------------------------
// SIMD through GCC's vector extensions (vfloat, vint and kLanes are vec_math.h's): one AVX
// register (8 floats) with -march=native on an AVX machine, one SSE register (4 floats)
// otherwise. Plain loops left the tile below to the auto-vectoriser, which shuffled and spilled;
// these compile to the instructions one would write (a multiply-add becomes one FMA where the CPU
// has it). exp_vec (vec_math.h) computes on vfloat too.

constexpr int kPanel = 2 * kLanes;  // columns of a packed panel

inline vfloat vload(const float* p) {
  vfloat v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void vstore(float* p, vfloat v) { std::memcpy(p, &v, sizeof v); }
// kLanes IEEE halves (a KV cache of type f16) widened to floats: one vcvtph2ps where the build has
// F16C, f16_to_f32 lane by lane otherwise. Widening is exact, so either gives the same floats.
inline vfloat vload(const uint16_t* p) {
#if defined(__F16C__) && defined(__AVX__)
  return reinterpret_cast<vfloat>(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#else
  vfloat v;
  for (int l = 0; l < kLanes; ++l) v[l] = f16_to_f32(p[l]);
  return v;
#endif
}
inline float widen(float x) { return x; }
inline float widen(uint16_t h) { return f16_to_f32(h); }
// The first n lanes (0 <= n <= kLanes) of p: a masked load and store on AVX, where a memcpy of a
// variable size would be a library call for every row or tile edge.
inline vint lanes_below(int n) {
  vint lane;
  for (int l = 0; l < kLanes; ++l) lane[l] = l;
  return lane < n;  // all ones in lanes [0, n)
}
inline vfloat vload_part(const float* p, int n) {
#if defined(__AVX__)
  return reinterpret_cast<vfloat>(_mm256_maskload_ps(p, reinterpret_cast<__m256i>(lanes_below(n))));
#else
  vfloat v{};
  std::memcpy(&v, p, n * sizeof(float));
  return v;
#endif
}
inline void vstore_part(float* p, vfloat v, int n) {
#if defined(__AVX__)
  _mm256_maskstore_ps(p, reinterpret_cast<__m256i>(lanes_below(n)), reinterpret_cast<__m256>(v));
#else
  std::memcpy(p, &v, n * sizeof(float));
#endif
}
inline vfloat vbroadcast(float x) {  // one vbroadcastss (GCC builds a lane loop from inserts)
#if defined(__AVX__)
  return reinterpret_cast<vfloat>(_mm256_set1_ps(x));
#elif defined(__SSE__)
  return reinterpret_cast<vfloat>(_mm_set1_ps(x));
#else
  vfloat v;
  for (int l = 0; l < kLanes; ++l) v[l] = x;
  return v;
#endif
}
inline float vsum(vfloat v) {
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += v[l];
  return s;
}

// ---------------------------------------------------------------------------------------------
// A small matrix multiply for the blocks inside one (batch, head):
//
//   C (M, N) = A (M, K) · B (K, N)   (kAdd false)   or   C += A · B   (kAdd true)
//
// A's element (r, k) lives at A[r * a_rs + k * a_cs], so a transposed A is just other strides.
// B is packed by pack_panels. C is row-major with row stride ldc.

// Packs the (n, m) matrix X, X(i, j) = x[i * rs + j], into panels of kPanel columns: panel p
// holds columns [p·kPanel, (p+1)·kPanel) of rows 0..n-1, row after row, so X(i, j) lands at
// dst[(j - j % kPanel) · n + i · kPanel + j % kPanel]. Columns past m are zero. dst holds
// panels(m) · n floats.
int panels(int m) { return (m + kPanel - 1) / kPanel * kPanel; }

void pack_panels(float* dst, const float* x, ptrdiff_t rs, int n, int m) {
  constexpr int kAhead = 8;  // rows of x are far apart in memory: ask for them early
  for (int i = 0; i < n; ++i) {
    const float* xi = x + i * rs;
    if (i + kAhead < n) {
      for (int j = 0; j < m; j += 16) __builtin_prefetch(xi + kAhead * rs + j);
    }
    for (int j0 = 0; j0 < m; j0 += kPanel) {
      const int w = std::min(kPanel, m - j0);
      float* di = dst + static_cast<size_t>(j0) * n + i * kPanel;
      for (int c = 0; c < w; ++c) di[c] = xi[j0 + c];
      for (int c = w; c < kPanel; ++c) di[c] = 0.0f;
    }
  }
}

#if defined(__AVX__)
// dst row r (8 floats, rows ds apart) = column r of the 8 × 8 block at src (rows ss apart).
inline void transpose8x8(float* dst, ptrdiff_t ds, const float* src, ptrdiff_t ss) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ss);
  for (int i = 0; i < 8; i += 2) {  // interleave row pairs: a0 b0 a1 b1 | a4 b4 a5 b5, and the 2/3, 6/7 halves
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {  // four rows' elements side by side: a0 b0 c0 d0 | a4 b4 c4 d4, ...
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {  // join the 128-bit halves of rows 0-3 and 4-7
    _mm256_storeu_ps(dst + i * ds, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * ds, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}
#endif

// Xᵀ (m, n) packed as pack_panels packs an (m, n) matrix, read straight from X (n, m),
// X(i, j) = x[i * rs + j]: X(i, j) lands at dst[(i - i % kPanel) · m + j · kPanel + i % kPanel],
// and the padding past row n of X is zero. Attention needs Kᵀ and Vᵀ this way; whole 8 × 8
// blocks go through AVX shuffles: element by element, packing took about a tenth of attention's time.
void pack_panels_transposed(float* dst, const float* x, ptrdiff_t rs, int n, int m) {
  for (int i0 = 0; i0 < n; i0 += kPanel) {  // a panel of dst: columns i0.. of Xᵀ = rows i0.. of X
    const int w = std::min(kPanel, n - i0);
    float* d = dst + static_cast<size_t>(i0) * m;
    const float* xi = x + i0 * rs;
    int j = 0;
#if defined(__AVX__)
    if (w == kPanel) {
      for (; j + 8 <= m; j += 8) {
        for (int c = 0; c < kPanel; c += 8) transpose8x8(d + j * kPanel + c, kPanel, xi + c * rs + j, rs);
      }
    }
#endif
    for (; j < m; ++j) {
      float* dj = d + j * kPanel;
      for (int c = 0; c < w; ++c) dj[c] = xi[c * rs + j];
      for (int c = w; c < kPanel; ++c) dj[c] = 0.0f;
    }
  }
}

// The register tile: C (MR, width) (+)= Σ_{k0 <= k < k1} A(r, k) · panel[k], width <= kPanel.
// MR × 2 accumulators (12 of AVX's 16 registers for MR = 6); each k loads the panel's row once
// and broadcasts MR values of A: twelve independent multiply-adds per eight loads.
template <int MR, bool kAdd>
inline void panel_tile(float* C, ptrdiff_t ldc, const float* A, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* panel,
                       int k0, int k1, int width) {
  vfloat zero{};
#if defined(__x86_64__) || defined(__i386__)
  asm("" : "+x"(zero));  // an opaque zero: for a literal one GCC clears the accumulators by calling memset
#endif
  vfloat acc0[MR], acc1[MR];
  for (int r = 0; r < MR; ++r) acc0[r] = acc1[r] = zero;
  for (int k = k0; k < k1; ++k) {
    vfloat b0 = vload(panel + k * kPanel), b1 = vload(panel + k * kPanel + kLanes);
#if defined(__x86_64__) || defined(__i386__)
    asm("" : "+x"(b0), "+x"(b1));  // keep the panel row in registers: GCC would reload it for every row
#endif
    for (int r = 0; r < MR; ++r) {
      const vfloat a = vbroadcast(A[r * a_rs + k * a_cs]);
      acc0[r] += a * b0;
      acc1[r] += a * b1;
    }
  }
  for (int r = 0; r < MR; ++r) {
    float* c = C + r * ldc;
    if (width == kPanel) {
      vstore(c, kAdd ? vload(c) + acc0[r] : acc0[r]);
      vstore(c + kLanes, kAdd ? vload(c + kLanes) + acc1[r] : acc1[r]);
    } else {
      const int w0 = std::min(width, kLanes), w1 = width - w0;
      vstore_part(c, kAdd ? vload_part(c, w0) + acc0[r] : acc0[r], w0);
      if (w1 > 0) vstore_part(c + kLanes, kAdd ? vload_part(c + kLanes, w1) + acc1[r] : acc1[r], w1);
    }
  }
}

template <int MR, bool kAdd, class Cols, class KRange>
inline void panel_rows(float* C, ptrdiff_t ldc, const float* A, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* panel,
                       int c0, int N, int r, Cols& cols, KRange& krange) {
  const int width = std::min(std::min(cols(r, MR), N) - c0, kPanel);
  if (width <= 0) return;
  const auto [k0, k1] = krange(r, MR);
  panel_tile<MR, kAdd>(C + r * ldc + c0, ldc, A + r * a_rs, a_rs, a_cs, panel, k0, k1, width);
}

// C (M, N) (+)= A (M, K) · B (K, N), B packed as pack_panels packs a (K, N) matrix. For the tile of
// rows [r, r + mr) only the columns below cols(r, mr) are written and only the k in
// [k0, k1) = krange(r, mr) are summed: attention's masks zero whole corners of these products,
// and the caller guarantees that a skipped k contributes zero and that unwritten columns are
// never read. Panels go outermost, so one panel stays in L1 while all the rows pass over it.
template <bool kAdd, class Cols, class KRange>
void panel_matmul(float* C, ptrdiff_t ldc, const float* A, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* B, int K,
                  int M, int N, Cols cols, KRange krange) {
  for (int c0 = 0; c0 < N; c0 += kPanel) {
    const float* panel = B + static_cast<size_t>(c0) * K;
    int r = 0;
    for (; r + kTileRows <= M; r += kTileRows)
      panel_rows<kTileRows, kAdd>(C, ldc, A, a_rs, a_cs, panel, c0, N, r, cols, krange);
    if (r + 4 <= M) {
      panel_rows<4, kAdd>(C, ldc, A, a_rs, a_cs, panel, c0, N, r, cols, krange);
      r += 4;
    }
    if (r + 2 <= M) {
      panel_rows<2, kAdd>(C, ldc, A, a_rs, a_cs, panel, c0, N, r, cols, krange);
      r += 2;
    }
    if (r < M) panel_rows<1, kAdd>(C, ldc, A, a_rs, a_cs, panel, c0, N, r, cols, krange);
  }
}

// The same, C overwritten or added to as `store` says.
template <class Cols, class KRange>
void panel_matmul(GradStore store, float* C, ptrdiff_t ldc, const float* A, ptrdiff_t a_rs, ptrdiff_t a_cs,
                  const float* B, int K, int M, int N, Cols cols, KRange krange) {
  if (store == GradStore::kAccumulate) panel_matmul<true>(C, ldc, A, a_rs, a_cs, B, K, M, N, cols, krange);
  else panel_matmul<false>(C, ldc, A, a_rs, a_cs, B, K, M, N, cols, krange);
}

// ---------------------------------------------------------------------------------------------

// Which keys one (batch, head) lets query i see: j in [0, visible(i)). visible(i) is
// non-decreasing in i, so the last query of a block sees the most keys of the block.
struct VisibleKeys {
  int key_len;  // keys past this are padding
  int offset;   // Tk - Tq: the queries are the last Tq of the Tk positions
  bool causal;
  int operator()(int i) const { return causal ? std::clamp(i + offset + 1, 0, key_len) : key_len; }
};

VisibleKeys visible_keys(const AttentionDims& d, const AttentionMask& mask, int b) {
  const int len = mask.key_lengths ? std::clamp(mask.key_lengths[b], 0, d.Tk) : d.Tk;
  return {len, d.Tk - d.Tq, mask.kind == MaskKind::kCausal};
}

// This thread's buffer `slot` (core/scratch.h: grows once, so training allocates nothing).
struct AttentionScratch;
float* scratch(int slot, size_t n) { return thread_scratch<AttentionScratch, 10>(slot, n); }

// p[from..to) = 0, with vector stores: these runs are short and many, too short for a memset call.
void zero_range(float* p, int from, int to) {
  int j = from;
  for (; j + kLanes <= to; j += kLanes) vstore(p + j, vfloat{});
  for (; j < to; ++j) p[j] = 0.0f;
}

// In place over the scores s[0..n) of one query: s = exp(s · scale - m), unnormalised, then
// s[n..width) = 0. stat = {m, 1 / Σ_j s_j}, m the largest scaled score, so that softmax(s · scale)
// = s · stat[1]: the forward pass scales the query's output row by it instead of all n
// probabilities, and probabilities_row repeats the same operations. A query that sees no key gets
// zeros and stat {0, 0}.
void exp_row(float* s, int n, int width, float scale, float* stat) {
  stat[0] = stat[1] = 0.0f;
  if (n > 0) {
    const int body = n - n % kLanes, tail = n - body;
    // The last partial vector is loaded with -inf past n, so every element sees the same math.
    const vfloat last = lanes_below(tail) ? vload_part(s + body, tail) : vbroadcast(-INFINITY);
    vfloat mx = last;
    for (int j = 0; j < body; j += kLanes) {
      const vfloat x = vload(s + j);
      mx = x > mx ? x : mx;
    }
    float m = mx[0];
    for (int l = 1; l < kLanes; ++l) m = std::max(m, mx[l]);
    stat[0] = m * scale;
    const vfloat m_s = vbroadcast(stat[0]);
    vfloat sum = exp_vec(last * scale - m_s);  // the padding lanes give exactly 0
    vstore_part(s + body, sum, tail);
    for (int j = 0; j < body; j += kLanes) {
      const vfloat e = exp_vec(vload(s + j) * scale - m_s);
      vstore(s + j, e);
      sum += e;
    }
    stat[1] = 1.0f / vsum(sum);
  }
  zero_range(s, std::min(n, width), width);
}

// The probabilities exp_row's statistics stand for, from the same scores s[0..n), in place:
// s_j = exp(s_j · scale - m) · (1 / Σ), the same operations as exp_row and the output scaling,
// so the same values; s[n..width) = 0.
void probabilities_row(float* s, int n, int width, float scale, const float* stat) {
  if (n > 0) {
    const int body = n - n % kLanes, tail = n - body;
    const vfloat m_s = vbroadcast(stat[0]), inv = vbroadcast(stat[1]);
    for (int j = 0; j < body; j += kLanes) vstore(s + j, exp_vec(vload(s + j) * scale - m_s) * inv);
    const vfloat last = lanes_below(tail) ? vload_part(s + body, tail) : vbroadcast(-INFINITY);
    vstore_part(s + body, exp_vec(last * scale - m_s) * inv, tail);
  }
  zero_range(s, std::min(n, width), width);
}

// x[0..n) *= c
void scale_row(float* x, int n, float c) {
  const vfloat cv = vbroadcast(c);
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) vstore(x + j, vload(x + j) * cv);
  for (; j < n; ++j) x[j] *= c;
}

// Σ_j a[j] b[j], j < n. Here and below, keys and values (E) are floats or halves.
template <class E>
float dot(const float* a, const E* b, int n) {
  vfloat acc{};
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) acc += vload(a + j) * vload(b + j);
  float s = vsum(acc);
  for (; j < n; ++j) s += a[j] * widen(b[j]);
  return s;
}

// Generation reads each cached key and value once: rows about kPrefetchAhead bytes ahead are asked
// for while these are summed (prefetch.h).
template <class E>
int rows_ahead(int D) {
  return std::max(1, static_cast<int>(kPrefetchAhead / (D * sizeof(E))));
}

// s[j] = q · k_j for j < n, k_j = k + j·ks: four keys at a time, so four sums run side by side.
template <class E>
void dot_rows(float* s, const float* q, const E* k, ptrdiff_t ks, int n, int D) {
  int j = 0;
  if (D % kLanes == 0) {  // eight keys at a time: more loads in flight (each key's sum as below)
    const int ahead = rows_ahead<E>(D);
    for (; j + 8 <= n; j += 8) {
      const E* k0 = k + j * ks;
      if (j + ahead + 8 <= n)
        for (int r = 0; r < 8; ++r) prefetch_lines(k0 + (ahead + r) * ks, D * sizeof(E));
      vfloat a[8] = {};
      for (int d = 0; d < D; d += kLanes) {
        const vfloat qv = vload(q + d);
        for (int r = 0; r < 8; ++r) a[r] += qv * vload(k0 + r * ks + d);
      }
      for (int r = 0; r < 8; ++r) s[j + r] = vsum(a[r]);
    }
  }
  for (; j + 4 <= n; j += 4) {
    const E* k0 = k + j * ks;
    vfloat a0{}, a1{}, a2{}, a3{};
    int d = 0;
    for (; d + kLanes <= D; d += kLanes) {
      const vfloat qv = vload(q + d);
      a0 += qv * vload(k0 + d);
      a1 += qv * vload(k0 + ks + d);
      a2 += qv * vload(k0 + 2 * ks + d);
      a3 += qv * vload(k0 + 3 * ks + d);
    }
    float t0 = vsum(a0), t1 = vsum(a1), t2 = vsum(a2), t3 = vsum(a3);
    for (; d < D; ++d) {
      t0 += q[d] * widen(k0[d]), t1 += q[d] * widen(k0[ks + d]), t2 += q[d] * widen(k0[2 * ks + d]);
      t3 += q[d] * widen(k0[3 * ks + d]);
    }
    s[j] = t0, s[j + 1] = t1, s[j + 2] = t2, s[j + 3] = t3;
  }
  for (; j < n; ++j) s[j] = dot(q, k + j * ks, D);
}

// o[0..D) = Σ_{j<n} p[j] v_j, v_j = v + j·vs
template <class E>
void weighted_rows(float* o, const float* p, const E* v, ptrdiff_t vs, int n, int D) {
  int d = 0;
  // Eight vectors a row where the head is that wide (GPT-2's 64): one pass reads each value row
  // whole, as the memory streams it, instead of half of it in each of two passes. Each o[d] sums
  // over j in the same order either way.
  const int ahead = rows_ahead<E>(D);
  for (; d + 8 * kLanes <= D; d += 8 * kLanes) {
    vfloat a[8] = {};
    for (int j = 0; j < n; ++j) {
      const vfloat pj = vbroadcast(p[j]);
      const E* vj = v + j * vs + d;
      if (d == 0 && j + ahead < n) prefetch_lines(vj + ahead * vs, D * sizeof(E));
      for (int r = 0; r < 8; ++r) a[r] += pj * vload(vj + r * kLanes);
    }
    for (int r = 0; r < 8; ++r) vstore(o + d + r * kLanes, a[r]);
  }
  for (; d + 4 * kLanes <= D; d += 4 * kLanes) {
    vfloat a0{}, a1{}, a2{}, a3{};
    for (int j = 0; j < n; ++j) {
      const vfloat pj = vbroadcast(p[j]);
      const E* vj = v + j * vs + d;
      a0 += pj * vload(vj), a1 += pj * vload(vj + kLanes), a2 += pj * vload(vj + 2 * kLanes);
      a3 += pj * vload(vj + 3 * kLanes);
    }
    vstore(o + d, a0), vstore(o + d + kLanes, a1), vstore(o + d + 2 * kLanes, a2), vstore(o + d + 3 * kLanes, a3);
  }
  for (; d + kLanes <= D; d += kLanes) {
    vfloat a{};
    for (int j = 0; j < n; ++j) a += vbroadcast(p[j]) * vload(v + j * vs + d);
    vstore(o + d, a);
  }
  for (; d < D; ++d) {
    float a = 0.0f;
    for (int j = 0; j < n; ++j) a += p[j] * widen(v[j * vs + d]);
    o[d] = a;
  }
}

// p (n) = dropout(p) in place: element j of the row whose att index starts at `base`.
void dropout_row(float* p, int n, uint64_t base, float dropout_p, float keep_scale, uint64_t seed) {
  for (int j = 0; j < n; ++j) p[j] = counter_uniform(seed, base + j) >= dropout_p ? p[j] * keep_scale : 0.0f;
}

// Key/value heads: Hkv, or H when 0.
int kv_heads(const AttentionDims& d) { return d.Hkv ? d.Hkv : d.H; }

void check_args(const AttentionDims& d, float dropout_p) {
  POTOP_CHECK(d.B >= 0 && d.Tq >= 0 && d.Tk >= 0 && d.H >= 0 && d.D > 0, "bad attention sizes");
  POTOP_CHECK(d.Hkv >= 0 && (d.Hkv == 0 || (d.H >= d.Hkv && d.H % d.Hkv == 0)),
              "the query heads H must be a multiple of the key/value heads Hkv");
  const int kv_row = kv_heads(d) * d.D;
  const int k_row = d.k_head_stride ? d.D : kv_row, v_row = d.v_head_stride ? d.D : kv_row;
  POTOP_CHECK(d.q_stride >= d.H * d.D && d.k_stride >= k_row && d.v_stride >= v_row,
              "a row stride is smaller than the row it holds");
  POTOP_CHECK(d.k_head_stride >= 0 && d.v_head_stride >= 0, "negative head stride");
  POTOP_CHECK(dropout_p >= 0.0f && dropout_p < 1.0f, "dropout_p must be in [0, 1)");
}

// Offsets of key/value head g's first key and value within batch b.
size_t key_offset(const AttentionDims& d, int b, int g) {
  return static_cast<size_t>(b) * d.Tk * d.k_stride + static_cast<size_t>(g) * (d.k_head_stride ? d.k_head_stride : d.D);
}
size_t value_offset(const AttentionDims& d, int b, int g) {
  return static_cast<size_t>(b) * d.Tk * d.v_stride + static_cast<size_t>(g) * (d.v_head_stride ? d.v_head_stride : d.D);
}

// The forward pass over keys and values of type E (float, or halves of a KV cache).
template <class E>
void forward(float* out, float* stats, float* att, const float* q, const E* k, const E* v, const AttentionDims& dims,
             const AttentionMask& mask, float dropout_p, uint64_t dropout_seed) {
  check_args(dims, dropout_p);
  const int B = dims.B, Tq = dims.Tq, Tk = dims.Tk, H = dims.H, D = dims.D, HD = H * D;
  const int Hkv = kv_heads(dims), group = Hkv ? H / Hkv : 0;  // query heads per key/value head
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const bool dropout = dropout_p > 0.0f;
  const float keep_scale = dropout ? 1.0f / (1.0f - dropout_p) : 1.0f;
  // Generation (a few queries) reads keys and values where they are: with nothing to pack once for
  // a group, its jobs are single query heads, more of them to share among the threads.
  const bool packed = Tq >= kTileRows;
  const int job_heads = packed ? group : 1, jobs = job_heads ? H / job_heads : 0;  // per batch row

#pragma omp parallel for schedule(static)
  for (int job = 0; job < B * jobs; ++job) {
    const int b = job / jobs, h0 = job % jobs * job_heads, g = h0 / group;
    const E* kb = k + key_offset(dims, b, g);    // (Tk, D), rows k_stride apart
    const E* vb = v + value_offset(dims, b, g);  // (Tk, D), rows v_stride apart
    const VisibleKeys visible = visible_keys(dims, mask, b);
    const int nk = Tq > 0 ? visible(Tq - 1) : 0;  // keys any query sees
    const int ld = panels(nk);                    // row stride of the scores
    float* kt = nullptr;  // Kᵀ (D, nk) in panels
    float* vp = nullptr;  // V (nk, D) in panels
    float* s;             // scores, then probabilities (mb, nk)
    if (packed) {
      kt = scratch(0, static_cast<size_t>(ld) * D);
      vp = scratch(1, static_cast<size_t>(panels(D)) * nk);
      s = scratch(2, static_cast<size_t>(kQueryBlock) * ld);
      if constexpr (std::is_same_v<E, float>) {
        pack_panels_transposed(kt, kb, dims.k_stride, nk, D);
        pack_panels(vp, vb, dims.v_stride, nk, D);
      } else {  // halves: widened into rows of floats first (a small part of a prompt's work)
        float* kf = scratch(3, static_cast<size_t>(nk) * D);
        float* vf = scratch(4, static_cast<size_t>(nk) * D);
        for (int j = 0; j < nk; ++j) {
          halves_to_floats(kb + static_cast<size_t>(j) * dims.k_stride, D, kf + static_cast<size_t>(j) * D);
          halves_to_floats(vb + static_cast<size_t>(j) * dims.v_stride, D, vf + static_cast<size_t>(j) * D);
        }
        pack_panels_transposed(kt, kf, D, nk, D);
        pack_panels(vp, vf, D, nk, D);
      }
    } else {
      s = scratch(0, ld);
    }

    for (int h = h0; h < h0 + job_heads; ++h) {
      const int bh = b * H + h;
      const float* qb = q + static_cast<size_t>(b) * Tq * dims.q_stride + h * D;  // (Tq, D), rows q_stride apart
      float* ob = out + static_cast<size_t>(b) * Tq * HD + h * D;                 // (Tq, D), rows HD apart
      float* st = stats + static_cast<size_t>(bh) * Tq * 2;                       // (Tq, 2)
      // Query row i's probabilities into att, if wanted, from its exp_row values e[0..n): e · (1 / Σ),
      // exactly as probabilities_row makes them; the masked rest exactly 0.
      auto keep_att = [&](int i, const float* e, int n) {
        if (att) {
          float* a = att + (static_cast<size_t>(bh) * Tq + i) * Tk;
          const float inv = st[2 * i + 1];
          for (int j = 0; j < n; ++j) a[j] = e[j] * inv;
          std::fill(a + n, a + Tk, 0.0f);
        }
      };
      auto att_index = [&](int i) { return (static_cast<uint64_t>(bh) * Tq + i) * Tk; };

      if (!packed) {
        for (int i = 0; i < Tq; ++i) {
          const int n = visible(i);
          dot_rows(s, qb + static_cast<size_t>(i) * dims.q_stride, kb, dims.k_stride, n, D);  // s = q kᵀ
          exp_row(s, n, nk, scale, st + 2 * i);  // p = softmax(s / √D) = e / Σ
          keep_att(i, s, n);
          if (dropout) dropout_row(s, n, att_index(i), dropout_p, keep_scale, dropout_seed);
          float* o = ob + static_cast<size_t>(i) * HD;
          weighted_rows(o, s, vb, dims.v_stride, n, D);  // o = p v = (e v) / Σ
          scale_row(o, D, st[2 * i + 1]);
        }
        continue;
      }

      for (int i0 = 0; i0 < Tq; i0 += kQueryBlock) {
        const int mb = std::min(kQueryBlock, Tq - i0);
        const int nb = visible(i0 + mb - 1);  // keys this block sees
        // A tile of query rows [r, r + mr) needs the keys its last query sees.
        auto keys_of_tile = [&](int r, int mr) { return visible(i0 + r + mr - 1); };
        // Scores are computed in whole panels (rows are ld = panels(nk) long): the columns past a
        // tile's keys are never read, and full-width tiles need no masked stores.
        auto score_columns = [&](int r, int mr) { return panels(keys_of_tile(r, mr)); };
        auto key_range = [&](int r, int mr) { return std::pair{0, keys_of_tile(r, mr)}; };
        auto head_dim = [&](int, int) { return D; };
        auto head_range = [&](int, int) { return std::pair{0, D}; };

        // s (mb, nb) = q (mb, D) · kᵀ (D, nb)
        panel_matmul<false>(s, ld, qb + static_cast<size_t>(i0) * dims.q_stride, dims.q_stride, 1, kt, D, mb, ld,
                            score_columns, head_range);
        for (int r = 0; r < mb; ++r) {
          float* sr = s + static_cast<size_t>(r) * ld;
          const int n = visible(i0 + r);
          exp_row(sr, n, nb, scale, st + 2 * (i0 + r));  // p = softmax(s / √D + mask) = e / Σ
          keep_att(i0 + r, sr, n);
          if (dropout) dropout_row(sr, n, att_index(i0 + r), dropout_p, keep_scale, dropout_seed);
        }
        // out (mb, D) = dropout(p) (mb, nb) · v (nb, D): dropout(e) · v, each row then divided by its Σ
        float* ob_blk = ob + static_cast<size_t>(i0) * HD;
        panel_matmul<false>(ob_blk, HD, s, ld, 1, vp, nk, mb, D, head_dim, key_range);
        for (int r = 0; r < mb; ++r) scale_row(ob_blk + static_cast<size_t>(r) * HD, D, st[2 * (i0 + r) + 1]);
      }
    }
  }
}

}  // namespace

void attention_forward(float* out, float* stats, float* att, const float* q, const float* k, const float* v,
                       const AttentionDims& dims, const AttentionMask& mask, float dropout_p,
                       uint64_t dropout_seed) {
  forward(out, stats, att, q, k, v, dims, mask, dropout_p, dropout_seed);
}

void attention_forward(float* out, float* stats, float* att, const float* q, const uint16_t* k, const uint16_t* v,
                       const AttentionDims& dims, const AttentionMask& mask) {
  forward(out, stats, att, q, k, v, dims, mask, 0.0f, 0);
}

void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* stats, const float* q,
                        const float* k, const float* v, const AttentionDims& dims, const AttentionMask& mask,
                        float dropout_p, uint64_t dropout_seed, GradStore store) {
  check_args(dims, dropout_p);
  const int B = dims.B, Tq = dims.Tq, Tk = dims.Tk, H = dims.H, D = dims.D, HD = H * D;
  const int Hkv = kv_heads(dims), group = Hkv ? H / Hkv : 0;  // query heads per key/value head
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const bool dropout = dropout_p > 0.0f;
  const float keep_scale = dropout ? 1.0f / (1.0f - dropout_p) : 1.0f;

#pragma omp parallel for schedule(static)
  for (int bg = 0; bg < B * Hkv; ++bg) {
    const int b = bg / Hkv, g = bg % Hkv;
    const size_t k_off = key_offset(dims, b, g);
    const size_t v_off = value_offset(dims, b, g);
    const float* kb = k + k_off;  // (Tk, D), rows k_stride apart; dk alike
    const float* vb = v + v_off;  // (Tk, D), rows v_stride apart; dv alike
    float* dkb = dk + k_off;
    float* dvb = dv + v_off;
    const VisibleKeys visible = visible_keys(dims, mask, b);
    const int nk = Tq > 0 ? visible(Tq - 1) : 0;
    const int ld = panels(nk), Dp = panels(D);

    float* kt = scratch(0, static_cast<size_t>(ld) * D);             // Kᵀ (D, nk) in panels
    float* vt = scratch(1, static_cast<size_t>(ld) * D);             // Vᵀ (D, nk) in panels
    float* kp = scratch(2, static_cast<size_t>(Dp) * nk);            // K (nk, D) in panels
    float* s = scratch(3, static_cast<size_t>(kQueryBlock) * ld);   // probabilities (mb, nk)
    float* ds = scratch(4, static_cast<size_t>(kQueryBlock) * ld);  // dp, then dscores (mb, nk)
    float* pd = dropout ? scratch(5, static_cast<size_t>(kQueryBlock) * ld) : s;  // dropout(p) (mb, nk)
    float* qp = scratch(6, static_cast<size_t>(Dp) * kQueryBlock);  // a block of q (mb, D) in panels
    float* dop = scratch(7, static_cast<size_t>(Dp) * kQueryBlock);  // a block of dout (mb, D) in panels
    // dk and dv (nk, D) sum over all query blocks of the group's heads here, rows Dp apart, and
    // reach dk, dv once at the end.
    float* dk_sum = scratch(8, static_cast<size_t>(Dp) * nk);
    float* dv_sum = scratch(9, static_cast<size_t>(Dp) * nk);
    pack_panels(kp, kb, dims.k_stride, nk, D);
    pack_panels_transposed(kt, kb, dims.k_stride, nk, D);
    pack_panels_transposed(vt, vb, dims.v_stride, nk, D);

    // The group's heads one after the other, and the rows of each block after block, add into the
    // same dk, dv sums on this thread. A head's last block goes first: it sees every key any query
    // sees (nk), so the first head's last block writes all of the sums and they need no clearing.
    const int last_block = Tq > 0 ? (Tq - 1) / kQueryBlock * kQueryBlock : -1;
    for (int h = g * group; h < (g + 1) * group; ++h) {
      const int bh = b * H + h;
      const size_t q_off = static_cast<size_t>(b) * Tq * dims.q_stride + h * D;
      const float* qb = q + q_off;  // (Tq, D), rows q_stride apart; dq alike
      float* dqb = dq + q_off;
      const float* dob = dout + static_cast<size_t>(b) * Tq * HD + h * D;  // (Tq, D), rows HD apart
      const float* st = stats + static_cast<size_t>(bh) * Tq * 2;         // (Tq, 2)
      for (int i0 = last_block; i0 >= 0; i0 -= kQueryBlock) {
        const int mb = std::min(kQueryBlock, Tq - i0);
        const int nb = visible(i0 + mb - 1);  // keys this block sees
        const float* dob_blk = dob + static_cast<size_t>(i0) * HD;
        const float* qb_blk = qb + static_cast<size_t>(i0) * dims.q_stride;
        auto keys_of_tile = [&](int r, int mr) { return visible(i0 + r + mr - 1); };
        // Scores are computed in whole panels (rows are ld = panels(nk) long): the columns past a
        // tile's keys are never read, and full-width tiles need no masked stores.
        auto score_columns = [&](int r, int mr) { return panels(keys_of_tile(r, mr)); };
        auto key_range = [&](int r, int mr) { return std::pair{0, keys_of_tile(r, mr)}; };
        auto head_dim = [&](int, int) { return D; };
        auto head_range = [&](int, int) { return std::pair{0, D}; };
        // For a tile of keys [j, j + mr): the block's queries that see key j (hence all later ones).
        auto queries_of_keys = [&](int j, int) {
          const int first = visible.causal ? std::clamp(j - visible.offset - i0, 0, mb) : 0;
          return std::pair{first, mb};
        };

        // forward: s = q · kᵀ, p = softmax(s / √D + mask), recomputed from the saved statistics
        panel_matmul<false>(s, ld, qb_blk, dims.q_stride, 1, kt, D, mb, ld, score_columns, head_range);
        // forward: out = dropout(p) · v  =>  d dropout(p) (mb, nb) = dout (mb, D) · vᵀ (D, nb)
        panel_matmul<false>(ds, ld, dob_blk, HD, 1, vt, D, mb, ld, score_columns, head_range);

        for (int r = 0; r < mb; ++r) {
          const int n = visible(i0 + r);
          float* pr = s + static_cast<size_t>(r) * ld;
          float* dr = ds + static_cast<size_t>(r) * ld;
          probabilities_row(pr, n, nb, scale, st + 2 * (i0 + r));  // p = e / Σ, as the forward pass
          // forward: p̃ = p ⊙ keep / (1 - p_drop)  =>  dp = dp̃ ⊙ keep / (1 - p_drop)
          if (dropout) {
            const uint64_t base = (static_cast<uint64_t>(bh) * Tq + i0 + r) * Tk;
            float* pdr = pd + static_cast<size_t>(r) * ld;
            for (int j = 0; j < n; ++j) {
              const float m = counter_uniform(dropout_seed, base + j) >= dropout_p ? keep_scale : 0.0f;
              pdr[j] = pr[j] * m;
              dr[j] *= m;
            }
            zero_range(pdr, n, nb);
          }
          // forward: p = softmax(s / √D)  =>  ds = p ⊙ (dp - Σ_j p ⊙ dp) / √D  (the 1/√D folded in here)
          const float sum = dot(pr, dr, n);
          for (int j = 0; j < n; ++j) dr[j] = pr[j] * (dr[j] - sum) * scale;
          zero_range(dr, n, nb);  // masked keys: no gradient
        }
        pack_panels(qp, qb_blk, dims.q_stride, mb, D);
        pack_panels(dop, dob_blk, HD, mb, D);

        // forward: out = p̃ · v  =>  dv (nb, D) += p̃ᵀ (nb, mb) · dout (mb, D)
        // forward: s = q · kᵀ  =>  dk (nb, D) += dsᵀ (nb, mb) · q (mb, D)
        const bool opens_sums = h == g * group && i0 == last_block;
        const GradStore into_sums = opens_sums ? GradStore::kOverwrite : GradStore::kAccumulate;
        panel_matmul(into_sums, dv_sum, Dp, pd, 1, ld, dop, mb, nb, D, head_dim, queries_of_keys);
        panel_matmul(into_sums, dk_sum, Dp, ds, 1, ld, qp, mb, nb, D, head_dim, queries_of_keys);
        //                      =>  dq (mb, D) += ds (mb, nb) · k (nb, D)
        float* dq_blk = dqb + static_cast<size_t>(i0) * dims.q_stride;
        panel_matmul(store, dq_blk, dims.q_stride, ds, ld, 1, kp, nk, mb, D, head_dim, key_range);
      }
    }
    // Keys no query sees (j >= nk) get no gradient.
    for (int j = 0; j < Tk; ++j) {
      float* dkj = dkb + static_cast<size_t>(j) * dims.k_stride;
      float* dvj = dvb + static_cast<size_t>(j) * dims.v_stride;
      const float* gk = dk_sum + static_cast<size_t>(j) * Dp;
      const float* gv = dv_sum + static_cast<size_t>(j) * Dp;
      if (j >= nk) {
        if (store == GradStore::kOverwrite) std::fill_n(dkj, D, 0.0f), std::fill_n(dvj, D, 0.0f);
      } else if (store == GradStore::kOverwrite) {
        std::copy_n(gk, D, dkj), std::copy_n(gv, D, dvj);
      } else {
        for (int d = 0; d < D; ++d) dkj[d] += gk[d];
        for (int d = 0; d < D; ++d) dvj[d] += gv[d];
      }
    }
  }
}

}  // namespace potop
