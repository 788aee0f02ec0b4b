// Multi-head scaled dot-product attention (see attention.h).
//
// Work split: every (batch, head) pair is one job; OpenMP hands the jobs to threads statically
// and a job runs start to finish on one thread. Jobs write disjoint memory (their own rows of
// att, their own D-wide column slice of out / dq / dk / dv), so there are no races and the
// result does not even depend on the thread count.
//
// Inside a job the products (Q·Kᵀ and P·V forward; dO·Vᵀ, Pᵀ·dO, dSᵀ·Q and dS·K backward) run on
// a small register-tiled matrix multiply (tiled_matmul below) that skips what the masks zero out:
// masked keys are never touched, so causal attention does half the work of the full Tq × Tk
// square. Queries go in blocks of kQueryBlock rows. Per-thread scratch (K or V transposed, one
// block of score gradients, one block of dropped-out probabilities) grows once and is reused, so
// training allocates nothing in steady state.
//
// Dropout never stores its mask: element (b, h, i, j) of att is kept iff
// counter_uniform(seed, ((b*H + h)*Tq + i)*Tk + j) >= p, recomputed by the backward pass.
#include "kernels/attention.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/rng.h"

namespace potop {

namespace {

constexpr int kQueryBlock = 64;  // query rows per block (backward: the k-depth of the dk, dv updates)
constexpr int kTileRows = 6;     // rows of C held in registers by tiled_matmul

// ---------------------------------------------------------------------------------------------
// SIMD through GCC's vector extensions: one AVX register (8 floats) with -march=native on an AVX
// machine, one SSE register (4 floats) otherwise. Plain loops left the tile below to the
// auto-vectoriser, which shuffled and spilled; these compile to the instructions one would write.

#if defined(__AVX__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
using vfloat = float __attribute__((vector_size(kLanes * sizeof(float))));
using vint = int32_t __attribute__((vector_size(kLanes * sizeof(float))));

inline vfloat vload(const float* p) {
  vfloat v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void vstore(float* p, vfloat v) { std::memcpy(p, &v, sizeof v); }
inline vfloat vbroadcast(float x) { return vfloat{} + x; }
inline float vsum(vfloat v) {
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += v[l];
  return s;
}

// exp(x) for x <= 0: Cephes' single-precision polynomial (about 1 ulp), and 0 below -87 where
// expf would go subnormal (such terms are < 1e-37 of the row's largest one, which is 1).
inline vfloat vexp_nonpositive(vfloat x) {
  const vfloat lo = vbroadcast(-88.0f);
  x = x < lo ? lo : x;
  const vfloat big = vbroadcast(12582912.0f);                     // 1.5 * 2^23
  const vfloat n = (x * 1.44269504088896341f + big) - big;        // round(x / ln 2)
  const vfloat r = (x - n * 0.693359375f) - n * -2.12194440e-4f;  // x - n ln 2, |r| <= ln 2 / 2
  vfloat p = vbroadcast(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;                                          // e^r
  const vint bits = (__builtin_convertvector(n, vint) + 127) << 23;  // 2^n
  const vfloat e = p * std::bit_cast<vfloat>(bits);
  return x < vbroadcast(-87.0f) ? vfloat{} : e;
}

// ---------------------------------------------------------------------------------------------
// A small matrix multiply for the blocks inside one (batch, head).
//
//   C (M, N) = A (M, K) · B (K, N)   (kAdd false)   or   C += A · B   (kAdd true)
//
// A's element (r, k) lives at A[r * a_rs + k * a_cs], so a transposed A is just other strides;
// B and C are row-major with row strides ldb and ldc, and B's rows are read contiguously.
// Rows go in tiles of kTileRows (then 4, 2, 1). For the tile of rows [r, r + mr) only the
// columns [0, cols(r, mr)) are written and only the k in [k0, k1) = krange(r, mr) are summed:
// attention's masks zero whole corners of these products, and the caller guarantees that a
// skipped k contributes zero. Columns go 2 vectors at a time, then 1, then the rest: one by one,
// or, with kPaddedB (B's rows may be read up to a whole vector past N; our scratch rows are),
// as one more vector of which only the first N % kLanes lanes are stored.
//
// The tile keeps kTileRows × 2 vectors of C in registers (12 of AVX's 16) while it walks k:
// two loads of B and six broadcasts of A feed twelve independent multiply-adds.

inline vfloat vload_part(const float* p, int n) {
  vfloat v{};
  std::memcpy(&v, p, n * sizeof(float));
  return v;
}
inline void vstore_part(float* p, vfloat v, int n) { std::memcpy(p, &v, n * sizeof(float)); }

template <int MR, int NV, bool kAdd>
inline void matmul_tile(float* C, ptrdiff_t ldc, const float* A, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* B,
                        ptrdiff_t ldb, int k0, int k1, int last_width = kLanes) {
  static_assert(NV == 1 || NV == 2);
  vfloat acc[MR][NV] = {};
  for (int k = k0; k < k1; ++k) {
    vfloat b0 = vload(B + k * ldb), b1{};
    if constexpr (NV == 2) b1 = vload(B + k * ldb + kLanes);
#if defined(__x86_64__) || defined(__i386__)
    asm("" : "+x"(b0), "+x"(b1));  // keep B's row in registers: GCC would reload it for every row
#endif
    for (int r = 0; r < MR; ++r) {
      const float a = A[r * a_rs + k * a_cs];
      acc[r][0] += a * b0;
      if constexpr (NV == 2) acc[r][1] += a * b1;
    }
  }
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < NV; ++v) {
      float* c = C + r * ldc + v * kLanes;
      const int width = v == NV - 1 ? last_width : kLanes;
      if (width == kLanes) {
        vstore(c, kAdd ? vload(c) + acc[r][v] : acc[r][v]);
      } else {
        vstore_part(c, kAdd ? vload_part(c, width) + acc[r][v] : acc[r][v], width);
      }
    }
  }
}

// One column (the last N % kLanes columns when B's rows end there).
template <int MR, bool kAdd>
inline void matmul_column(float* C, ptrdiff_t ldc, const float* A, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* B,
                          ptrdiff_t ldb, int k0, int k1) {
  float acc[MR] = {};
  for (int k = k0; k < k1; ++k)
    for (int r = 0; r < MR; ++r) acc[r] += A[r * a_rs + k * a_cs] * B[k * ldb];
  for (int r = 0; r < MR; ++r) C[r * ldc] = kAdd ? C[r * ldc] + acc[r] : acc[r];
}

template <int MR, bool kAdd, bool kPaddedB, class Cols, class KRange>
inline void matmul_row_tile(float* C, ptrdiff_t ldc, const float* A, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* B,
                            ptrdiff_t ldb, int r, Cols& cols, KRange& krange) {
  const auto [k0, k1] = krange(r, MR);
  const int N = cols(r, MR);
  C += r * ldc;
  A += r * a_rs;
  int c = 0;
  for (; c + 2 * kLanes <= N; c += 2 * kLanes) matmul_tile<MR, 2, kAdd>(C + c, ldc, A, a_rs, a_cs, B + c, ldb, k0, k1);
  for (; c + kLanes <= N; c += kLanes) matmul_tile<MR, 1, kAdd>(C + c, ldc, A, a_rs, a_cs, B + c, ldb, k0, k1);
  if constexpr (kPaddedB) {
    if (c < N) matmul_tile<MR, 1, kAdd>(C + c, ldc, A, a_rs, a_cs, B + c, ldb, k0, k1, N - c);
  } else {
    for (; c < N; ++c) matmul_column<MR, kAdd>(C + c, ldc, A, a_rs, a_cs, B + c, ldb, k0, k1);
  }
}

template <bool kAdd, bool kPaddedB = false, class Cols, class KRange>
void tiled_matmul(float* C, ptrdiff_t ldc, const float* A, ptrdiff_t a_rs, ptrdiff_t a_cs, const float* B,
                  ptrdiff_t ldb, int M, Cols cols, KRange krange) {
  int r = 0;
  for (; r + kTileRows <= M; r += kTileRows)
    matmul_row_tile<kTileRows, kAdd, kPaddedB>(C, ldc, A, a_rs, a_cs, B, ldb, r, cols, krange);
  if (r + 4 <= M) {
    matmul_row_tile<4, kAdd, kPaddedB>(C, ldc, A, a_rs, a_cs, B, ldb, r, cols, krange);
    r += 4;
  }
  if (r + 2 <= M) {
    matmul_row_tile<2, kAdd, kPaddedB>(C, ldc, A, a_rs, a_cs, B, ldb, r, cols, krange);
    r += 2;
  }
  if (r < M) matmul_row_tile<1, kAdd, kPaddedB>(C, ldc, A, a_rs, a_cs, B, ldb, r, cols, krange);
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

// Reusable per-thread buffers: they only grow, so steady-state training allocates nothing.
float* scratch(int slot, size_t n) {
  thread_local std::vector<float> buffers[3];
  if (buffers[slot].size() < n) buffers[slot].resize(n);
  return buffers[slot].data();
}

// Row length of a transposed (D, n) scratch matrix: n rounded up to whole vectors, so that
// tiled_matmul may read its rows as kPaddedB.
int padded(int n) { return (n + kLanes - 1) / kLanes * kLanes; }

// t (D, n) = x (n, D)ᵀ, t's rows ldt apart and x's stride apart; in 8 × 8 blocks so that neither
// the loads nor the stores walk a whole column.
void transpose_rows(float* t, ptrdiff_t ldt, const float* x, ptrdiff_t stride, int n, int D) {
  constexpr int kBlock = 8;
  for (int j0 = 0; j0 < n; j0 += kBlock) {
    const int j1 = std::min(j0 + kBlock, n);
    for (int d0 = 0; d0 < D; d0 += kBlock) {
      const int d1 = std::min(d0 + kBlock, D);
      for (int j = j0; j < j1; ++j)
        for (int d = d0; d < d1; ++d) t[d * ldt + j] = x[j * stride + d];
    }
  }
}

// In place over one row of att: s[0..n) = softmax(s * scale), s[n..Tk) = 0 (the masked keys).
void softmax_row(float* s, int n, int Tk, float scale) {
  if (n > 0) {
    const int body = n - n % kLanes, tail = n - body;
    // The last partial vector goes through a padded copy, so every element sees the same math.
    vfloat last = vbroadcast(-INFINITY);
    std::memcpy(&last, s + body, tail * sizeof(float));
    vfloat mx = last;
    for (int j = 0; j < body; j += kLanes) {
      const vfloat x = vload(s + j);
      mx = x > mx ? x : mx;
    }
    float m = mx[0];
    for (int l = 1; l < kLanes; ++l) m = std::max(m, mx[l]);
    const vfloat m_s = vbroadcast(m * scale);
    vfloat sum = vexp_nonpositive(last * scale - m_s);  // the padding lanes give exactly 0
    std::memcpy(s + body, &sum, tail * sizeof(float));
    for (int j = 0; j < body; j += kLanes) {
      const vfloat e = vexp_nonpositive(vload(s + j) * scale - m_s);
      vstore(s + j, e);
      sum += e;
    }
    const float inv = 1.0f / vsum(sum);
    for (int j = 0; j < n; ++j) s[j] *= inv;
  }
  std::fill(s + n, s + Tk, 0.0f);
}

// Σ_j a[j] b[j], j < n
float dot(const float* a, const float* b, int n) {
  vfloat acc{};
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) acc += vload(a + j) * vload(b + j);
  float s = vsum(acc);
  for (; j < n; ++j) s += a[j] * b[j];
  return s;
}

void check_args(const AttentionDims& d, float dropout_p) {
  POTOP_CHECK(d.B >= 0 && d.Tq >= 0 && d.Tk >= 0 && d.H >= 0 && d.D > 0, "bad attention sizes");
  POTOP_CHECK(d.q_stride >= d.H * d.D && d.k_stride >= d.H * d.D && d.v_stride >= d.H * d.D,
              "a row stride is smaller than H*D");
  POTOP_CHECK(dropout_p >= 0.0f && dropout_p < 1.0f, "dropout_p must be in [0, 1)");
}

}  // namespace

void attention_forward(float* out, float* att, const float* q, const float* k, const float* v,
                       const AttentionDims& dims, const AttentionMask& mask, float dropout_p,
                       uint64_t dropout_seed) {
  check_args(dims, dropout_p);
  const int B = dims.B, Tq = dims.Tq, Tk = dims.Tk, H = dims.H, D = dims.D, HD = H * D;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const bool dropout = dropout_p > 0.0f;
  const float keep_scale = dropout ? 1.0f / (1.0f - dropout_p) : 1.0f;

#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < B * H; ++bh) {
    const int b = bh / H, h = bh % H;
    const float* qb = q + static_cast<size_t>(b) * Tq * dims.q_stride + h * D;  // (Tq, D), rows q_stride apart
    const float* kb = k + static_cast<size_t>(b) * Tk * dims.k_stride + h * D;  // (Tk, D), rows k_stride apart
    const float* vb = v + static_cast<size_t>(b) * Tk * dims.v_stride + h * D;  // (Tk, D), rows v_stride apart
    float* ob = out + static_cast<size_t>(b) * Tq * HD + h * D;                 // (Tq, D), rows HD apart
    float* ab = att + static_cast<size_t>(bh) * Tq * Tk;                        // (Tq, Tk)
    const VisibleKeys visible = visible_keys(dims, mask, b);
    const int nk = Tq > 0 ? visible(Tq - 1) : 0;  // keys any query sees

    const int ldt = padded(nk);
    float* kt = scratch(0, static_cast<size_t>(D) * ldt);  // (D, nk) = Kᵀ, rows ldt apart
    transpose_rows(kt, ldt, kb, dims.k_stride, nk, D);

    for (int i0 = 0; i0 < Tq; i0 += kQueryBlock) {
      const int mb = std::min(kQueryBlock, Tq - i0);
      float* a = ab + static_cast<size_t>(i0) * Tk;  // (mb, Tk)
      // A tile of query rows [r, r + mr) needs the keys its last query sees.
      auto keys_of_tile = [&](int r, int mr) { return visible(i0 + r + mr - 1); };
      auto key_range = [&](int r, int mr) { return std::pair{0, keys_of_tile(r, mr)}; };
      auto head_dim = [&](int, int) { return D; };
      auto head_range = [&](int, int) { return std::pair{0, D}; };

      // scores (mb, nk) = q (mb, D) · kᵀ (D, nk), into att
      tiled_matmul<false, true>(a, Tk, qb + static_cast<size_t>(i0) * dims.q_stride, dims.q_stride, 1, kt, ldt, mb,
                                keys_of_tile, head_range);
      // att = softmax(scores / √D + mask)
      for (int r = 0; r < mb; ++r) softmax_row(a + static_cast<size_t>(r) * Tk, visible(i0 + r), Tk, scale);

      // p (mb, nk) = dropout(att): what multiplies V
      const float* p = a;
      ptrdiff_t ldp = Tk;
      if (dropout) {
        float* pd = scratch(1, static_cast<size_t>(kQueryBlock) * nk);
        for (int r = 0; r < mb; ++r) {
          const int n = visible(i0 + r);
          const uint64_t base = (static_cast<uint64_t>(bh) * Tq + i0 + r) * Tk;
          const float* ar = a + static_cast<size_t>(r) * Tk;
          float* pr = pd + static_cast<size_t>(r) * nk;
          for (int j = 0; j < n; ++j)
            pr[j] = counter_uniform(dropout_seed, base + j) >= dropout_p ? ar[j] * keep_scale : 0.0f;
          std::fill(pr + n, pr + nk, 0.0f);
        }
        p = pd;
        ldp = nk;
      }

      // out (mb, D) = p (mb, nk) · v (nk, D)
      tiled_matmul<false>(ob + static_cast<size_t>(i0) * HD, HD, p, ldp, 1, vb, dims.v_stride, mb, head_dim,
                          key_range);
    }
  }
}

void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* att, const float* q,
                        const float* k, const float* v, const AttentionDims& dims, const AttentionMask& mask,
                        float dropout_p, uint64_t dropout_seed) {
  check_args(dims, dropout_p);
  const int B = dims.B, Tq = dims.Tq, Tk = dims.Tk, H = dims.H, D = dims.D, HD = H * D;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const bool dropout = dropout_p > 0.0f;
  const float keep_scale = dropout ? 1.0f / (1.0f - dropout_p) : 1.0f;

#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < B * H; ++bh) {
    const int b = bh / H, h = bh % H;
    const size_t q_off = static_cast<size_t>(b) * Tq * dims.q_stride + h * D;
    const size_t k_off = static_cast<size_t>(b) * Tk * dims.k_stride + h * D;
    const size_t v_off = static_cast<size_t>(b) * Tk * dims.v_stride + h * D;
    const float* qb = q + q_off;  // (Tq, D), rows q_stride apart; dq alike
    const float* kb = k + k_off;  // (Tk, D), rows k_stride apart; dk alike
    const float* vb = v + v_off;  // (Tk, D), rows v_stride apart; dv alike
    float* dqb = dq + q_off;
    float* dkb = dk + k_off;
    float* dvb = dv + v_off;
    const float* dob = dout + static_cast<size_t>(b) * Tq * HD + h * D;  // (Tq, D), rows HD apart
    const float* ab = att + static_cast<size_t>(bh) * Tq * Tk;           // (Tq, Tk)
    const VisibleKeys visible = visible_keys(dims, mask, b);
    const int nk = Tq > 0 ? visible(Tq - 1) : 0;

    const int ldt = padded(nk);
    float* vt = scratch(0, static_cast<size_t>(D) * ldt);  // (D, nk) = Vᵀ, rows ldt apart
    transpose_rows(vt, ldt, vb, dims.v_stride, nk, D);
    float* ds = scratch(1, static_cast<size_t>(kQueryBlock) * nk);  // (mb, nk): dp, then dscores
    float* pd = dropout ? scratch(2, static_cast<size_t>(kQueryBlock) * nk) : nullptr;  // (mb, nk)

    // Rows of a (batch, head) go block after block on this thread: blocks add into the same dk, dv.
    for (int i0 = 0; i0 < Tq; i0 += kQueryBlock) {
      const int mb = std::min(kQueryBlock, Tq - i0);
      const int nb = visible(i0 + mb - 1);  // keys this block sees
      const float* a = ab + static_cast<size_t>(i0) * Tk;
      const float* dob_blk = dob + static_cast<size_t>(i0) * HD;
      const float* qb_blk = qb + static_cast<size_t>(i0) * dims.q_stride;
      auto keys_of_tile = [&](int r, int mr) { return visible(i0 + r + mr - 1); };
      auto key_range = [&](int r, int mr) { return std::pair{0, keys_of_tile(r, mr)}; };
      auto head_dim = [&](int, int) { return D; };
      auto head_range = [&](int, int) { return std::pair{0, D}; };
      // For a tile of keys [j, j + mr): the block's queries that see key j (hence all later ones).
      auto queries_of_keys = [&](int j, int) {
        const int first = visible.causal ? std::clamp(j - visible.offset - i0, 0, mb) : 0;
        return std::pair{first, mb};
      };

      // forward: out = p · v, p = dropout(att)
      // dp (mb, nb) = dout (mb, D) · vᵀ (D, nb)
      tiled_matmul<false, true>(ds, nk, dob_blk, HD, 1, vt, ldt, mb, keys_of_tile, head_range);

      for (int r = 0; r < mb; ++r) {
        const int n = visible(i0 + r);
        const float* ar = a + static_cast<size_t>(r) * Tk;
        float* dr = ds + static_cast<size_t>(r) * nk;
        // forward: p = att ⊙ keep / (1 - p_drop)  =>  datt = dp ⊙ keep / (1 - p_drop)
        if (dropout) {
          const uint64_t base = (static_cast<uint64_t>(bh) * Tq + i0 + r) * Tk;
          float* pr = pd + static_cast<size_t>(r) * nk;
          for (int j = 0; j < n; ++j) {
            const float m = counter_uniform(dropout_seed, base + j) >= dropout_p ? keep_scale : 0.0f;
            pr[j] = ar[j] * m;
            dr[j] *= m;
          }
          std::fill(pr + n, pr + nb, 0.0f);
        }
        // forward: att = softmax(scores), scores = q·k / √D  =>
        // dscores = att ⊙ (datt - Σ_j att ⊙ datt) / √D  (the 1/√D folded in here)
        const float sum = dot(ar, dr, n);
        for (int j = 0; j < n; ++j) dr[j] = ar[j] * (dr[j] - sum) * scale;
        std::fill(dr + n, dr + nb, 0.0f);  // masked keys: no gradient
      }
      const float* p = dropout ? pd : a;
      const ptrdiff_t ldp = dropout ? nk : Tk;

      // forward: out = p · v  =>  dv (nb, D) += pᵀ (nb, mb) · dout (mb, D)
      tiled_matmul<true>(dvb, dims.v_stride, p, 1, ldp, dob_blk, HD, nb, head_dim, queries_of_keys);
      // forward: scores = q · kᵀ  =>  dk (nb, D) += dscoresᵀ (nb, mb) · q (mb, D)
      tiled_matmul<true>(dkb, dims.k_stride, ds, 1, nk, qb_blk, dims.q_stride, nb, head_dim, queries_of_keys);
      //                           =>  dq (mb, D) += dscores (mb, nb) · k (nb, D)
      tiled_matmul<true>(dqb + static_cast<size_t>(i0) * dims.q_stride, dims.q_stride, ds, nk, 1, kb, dims.k_stride,
                         mb, head_dim, key_range);
    }
  }
}

}  // namespace potop
