// attention_forward / attention_backward against a double-precision reference written here, and
// the backward against central finite differences of that reference: L = Σ w ⊙ out, w random.
//
// The finite differences are exact to ~1e-7: inputs are multiples of 1/32 and the step is 2^-10,
// so x ± h is exact in float, and L is evaluated in double. A wrong gradient term (a missing
// 1/√D, softmax's Σ term, a dropout factor, a masked key leaking in) misses by orders of
// magnitude more than the tolerances below.
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/threads.h"
#include "kernels/quant.h"
#include "support/testing.h"

namespace potop {
namespace {

using testing::central_difference;
using testing::max_abs_diff;
using testing::nmse;
using testing::random_vector;

constexpr float kSentinel = -12345.0f;  // fills padding columns and guard zones
constexpr size_t kGuard = 37;           // floats after every buffer that must stay untouched
constexpr float kStep = 1.0f / 1024;    // finite-difference step

// Where q, k and v live in a Problem's buffer.
enum class Layout {
  kSeparate,  // three blocks of rows
  kFused,     // the three parts of one QKV projection output's rows
  kHeadMajor  // q in rows; k and v as a KV cache keeps them: (Hkv, Tmax, D), Tmax > Tk (B = 1)
};

// One attention problem. q, k and v live in one buffer `data`, laid out as `layout` says; in
// every layout rows or heads have padding between them, so strides differ from C (and from Tk·D),
// and `is_input` marks the real elements. Hkv key/value heads (dims.Hkv, 0: H).
struct Problem {
  AttentionDims dims;
  Layout layout = Layout::kSeparate;
  MaskKind kind = MaskKind::kCausal;
  std::vector<int> lengths;  // per batch; empty: no padding mask
  float p = 0.0f;            // dropout
  uint64_t seed = 0;
  std::vector<float> data;
  std::vector<char> is_input;
  size_t q_off = 0, k_off = 0, v_off = 0;

  int C() const { return dims.H * dims.D; }
  int kv_heads() const { return dims.Hkv ? dims.Hkv : dims.H; }
  int kv_C() const { return kv_heads() * dims.D; }
  // Offsets of key / value j of batch b and key/value head g, from the strides' definitions.
  size_t k_at(int b, int j, int g) const {
    return (static_cast<size_t>(b) * dims.Tk + j) * dims.k_stride +
           static_cast<size_t>(g) * (dims.k_head_stride ? dims.k_head_stride : dims.D);
  }
  size_t v_at(int b, int j, int g) const {
    return (static_cast<size_t>(b) * dims.Tk + j) * dims.v_stride +
           static_cast<size_t>(g) * (dims.v_head_stride ? dims.v_head_stride : dims.D);
  }
  AttentionMask mask() const { return {kind, lengths.empty() ? nullptr : lengths.data()}; }
  size_t out_size() const { return static_cast<size_t>(dims.B) * dims.Tq * C(); }
  size_t att_size() const { return static_cast<size_t>(dims.B) * dims.H * dims.Tq * dims.Tk; }
  const float* q() const { return data.data() + q_off; }
  const float* k() const { return data.data() + k_off; }
  const float* v() const { return data.data() + v_off; }
  std::string describe() const {
    static const char* const kLayouts[] = {" separate", " fused", " head-major"};
    std::string s = "B=" + std::to_string(dims.B) + " Tq=" + std::to_string(dims.Tq) + " Tk=" +
                    std::to_string(dims.Tk) + " H=" + std::to_string(dims.H) + " Hkv=" + std::to_string(dims.Hkv) +
                    " D=" + std::to_string(dims.D) + (kind == MaskKind::kCausal ? " causal" : " none") +
                    " p=" + std::to_string(p) + kLayouts[static_cast<int>(layout)];
    if (!lengths.empty()) {
      s += " lengths=";
      for (int l : lengths) s += std::to_string(l) + ",";
    }
    return s;
  }
};

// Hkv key/value heads (0: dims.Hkv stays 0, the multi-head default).
Problem make_gqa_problem(int B, int Tq, int Tk, int H, int Hkv, int D, MaskKind kind, Layout layout,
                         uint64_t seed = 1) {
  Problem pr;
  const int C = H * D, Ckv = (Hkv ? Hkv : H) * D;
  pr.dims = {B, Tq, Tk, H, D, 0, 0, 0};
  pr.dims.Hkv = Hkv;
  pr.layout = layout;
  pr.kind = kind;
  size_t size = 0;
  auto mark = [&](size_t off, int rows, int stride, int cols) {
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) pr.is_input[off + static_cast<size_t>(r) * stride + c] = 1;
  };
  if (layout == Layout::kFused) {
    EXPECT_EQ(Tq, Tk) << "a fused QKV buffer has one T";
    const int stride = C + 2 * Ckv + 3;
    pr.dims.q_stride = pr.dims.k_stride = pr.dims.v_stride = stride;
    pr.q_off = 0, pr.k_off = C, pr.v_off = C + Ckv;
    size = static_cast<size_t>(B) * Tq * stride + kGuard;
    pr.is_input.assign(size, 0);
    mark(0, B * Tq, stride, C + 2 * Ckv);
  } else if (layout == Layout::kHeadMajor) {
    EXPECT_EQ(B, 1) << "head-major keys hold one sequence, as a KV cache does";
    const int Tmax = Tk + 3, heads = Hkv ? Hkv : H;
    pr.dims.q_stride = C + 1, pr.dims.k_stride = pr.dims.v_stride = D;
    pr.dims.k_head_stride = pr.dims.v_head_stride = Tmax * D;
    pr.q_off = 0;
    pr.k_off = pr.q_off + static_cast<size_t>(B) * Tq * pr.dims.q_stride;
    pr.v_off = pr.k_off + static_cast<size_t>(heads) * Tmax * D;
    size = pr.v_off + static_cast<size_t>(heads) * Tmax * D + kGuard;
    pr.is_input.assign(size, 0);
    mark(pr.q_off, B * Tq, pr.dims.q_stride, C);
    for (int g = 0; g < heads; ++g) {
      mark(pr.k_off + static_cast<size_t>(g) * Tmax * D, Tk, D, D);  // slots Tk..Tmax-1: unused cache
      mark(pr.v_off + static_cast<size_t>(g) * Tmax * D, Tk, D, D);
    }
  } else {
    pr.dims.q_stride = C + 1, pr.dims.k_stride = Ckv + 2, pr.dims.v_stride = Ckv + 3;
    pr.q_off = 0;
    pr.k_off = pr.q_off + static_cast<size_t>(B) * Tq * pr.dims.q_stride;
    pr.v_off = pr.k_off + static_cast<size_t>(B) * Tk * pr.dims.k_stride;
    size = pr.v_off + static_cast<size_t>(B) * Tk * pr.dims.v_stride + kGuard;
    pr.is_input.assign(size, 0);
    mark(pr.q_off, B * Tq, pr.dims.q_stride, C);
    mark(pr.k_off, B * Tk, pr.dims.k_stride, Ckv);
    mark(pr.v_off, B * Tk, pr.dims.v_stride, Ckv);
  }
  const std::vector<float> r = random_vector(size, seed);
  pr.data.resize(size);
  for (size_t i = 0; i < size; ++i) pr.data[i] = pr.is_input[i] ? std::round(r[i] * 32.0f) / 32.0f : kSentinel;
  return pr;
}

Problem make_problem(int B, int Tq, int Tk, int H, int D, MaskKind kind, bool fused, uint64_t seed = 1) {
  return make_gqa_problem(B, Tq, Tk, H, 0, D, kind, fused ? Layout::kFused : Layout::kSeparate, seed);
}

// The same problem with contiguous (B, T, C) q, k, v: for building KV-cache comparisons.
std::vector<float> gather(const float* x, int stride, int B, int T, int C, int t0 = 0) {
  std::vector<float> out(static_cast<size_t>(B) * (T - t0) * C);
  for (int b = 0; b < B; ++b)
    for (int t = t0; t < T; ++t)
      for (int c = 0; c < C; ++c)
        out[(static_cast<size_t>(b) * (T - t0) + t - t0) * C + c] = x[(static_cast<size_t>(b) * T + t) * stride + c];
  return out;
}

struct Reference {
  std::vector<double> out, att;
  int dropped = 0;  // visible probabilities that dropout zeroed
};

// Straight from the definition, in double, with the mask written as a predicate; query head h
// reads key/value head h / (H / Hkv).
Reference reference_forward(const Problem& pr) {
  const AttentionDims& d = pr.dims;
  const int C = pr.C();
  Reference ref;
  ref.out.assign(pr.out_size(), 0.0);
  ref.att.assign(pr.att_size(), 0.0);
  const int group = d.H / pr.kv_heads();
  std::vector<double> s(d.Tk);
  for (int b = 0; b < d.B; ++b)
    for (int h = 0; h < d.H; ++h)
      for (int i = 0; i < d.Tq; ++i) {
        const int g = h / group;
        auto visible = [&](int j) {
          if (pr.kind == MaskKind::kCausal && j > i + (d.Tk - d.Tq)) return false;
          return pr.lengths.empty() || j < pr.lengths[b];
        };
        const float* qi = pr.q() + (static_cast<size_t>(b) * d.Tq + i) * d.q_stride + h * d.D;
        double mx = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < d.Tk; ++j) {
          if (!visible(j)) continue;
          const float* kj = pr.k() + pr.k_at(b, j, g);
          double dot = 0;
          for (int e = 0; e < d.D; ++e) dot += static_cast<double>(qi[e]) * kj[e];
          s[j] = dot / std::sqrt(static_cast<double>(d.D));
          mx = std::max(mx, s[j]);
        }
        if (mx == -std::numeric_limits<double>::infinity()) continue;  // no visible key: zeros
        double sum = 0;
        for (int j = 0; j < d.Tk; ++j)
          if (visible(j)) sum += std::exp(s[j] - mx);
        const size_t row = ((static_cast<size_t>(b) * d.H + h) * d.Tq + i) * d.Tk;
        double* o = ref.out.data() + (static_cast<size_t>(b) * d.Tq + i) * C + h * d.D;
        for (int j = 0; j < d.Tk; ++j) {
          if (!visible(j)) continue;
          const double a = std::exp(s[j] - mx) / sum;
          ref.att[row + j] = a;
          double w = a;
          if (pr.p > 0) {
            const bool keep = counter_uniform(pr.seed, row + j) >= pr.p;
            w = keep ? a / (1.0 - pr.p) : 0.0;
            ref.dropped += !keep;
          }
          const float* vj = pr.v() + pr.v_at(b, j, g);
          for (int e = 0; e < d.D; ++e) o[e] += w * vj[e];
        }
      }
  return ref;
}

struct Outputs {
  std::vector<float> out, stats, att, grads;  // grads: same layout as Problem::data
};

// Runs the kernels. out and att start as NaN, so every element must be written; each buffer
// ends in a guard zone of sentinels. grads start at `grads_init` (which has data's layout).
Outputs run_kernels(const Problem& pr, const std::vector<float>* dout = nullptr,
                    const std::vector<float>* grads_init = nullptr) {
  Outputs o;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  o.out.assign(pr.out_size() + kGuard, nan);
  o.att.assign(pr.att_size() + kGuard, nan);
  o.stats.assign(attention_stats_size(pr.dims) + kGuard, nan);
  std::fill(o.out.end() - kGuard, o.out.end(), kSentinel);
  std::fill(o.att.end() - kGuard, o.att.end(), kSentinel);
  std::fill(o.stats.end() - kGuard, o.stats.end(), kSentinel);
  attention_forward(o.out.data(), o.stats.data(), o.att.data(), pr.q(), pr.k(), pr.v(), pr.dims, pr.mask(), pr.p,
                    pr.seed);
  if (dout) {
    o.grads = *grads_init;
    float* g = o.grads.data();
    attention_backward(g + pr.q_off, g + pr.k_off, g + pr.v_off, dout->data(), o.stats.data(), pr.q(), pr.k(),
                       pr.v(), pr.dims, pr.mask(), pr.p, pr.seed);
  }
  return o;
}

void expect_guards_intact(const std::vector<float>& buf, const char* what) {
  for (size_t i = buf.size() - kGuard; i < buf.size(); ++i)
    ASSERT_EQ(buf[i], kSentinel) << what << " written past its end";
}

// Forward against the reference: values, exact zeros where masked, no NaN, no stray writes.
void check_forward(const Problem& pr) {
  SCOPED_TRACE(pr.describe());
  const Reference ref = reference_forward(pr);
  const Outputs o = run_kernels(pr);
  expect_guards_intact(o.out, "out");
  expect_guards_intact(o.att, "att");
  expect_guards_intact(o.stats, "stats");
  for (size_t i = 0; i < pr.out_size(); ++i) ASSERT_FALSE(std::isnan(o.out[i])) << "out[" << i << "]";
  for (size_t i = 0; i < pr.att_size(); ++i) {
    ASSERT_FALSE(std::isnan(o.att[i])) << "att[" << i << "]";
    if (ref.att[i] == 0.0) {
      ASSERT_EQ(o.att[i], 0.0f) << "masked att[" << i << "] must be exactly 0";
    }
  }
  EXPECT_LT(nmse(o.out.data(), ref.out.data(), pr.out_size()), 1e-11);
  EXPECT_LT(max_abs_diff(o.out.data(), ref.out.data(), pr.out_size()), 1e-5);
  EXPECT_LT(nmse(o.att.data(), ref.att.data(), pr.att_size()), 1e-11);
  EXPECT_LT(max_abs_diff(o.att.data(), ref.att.data(), pr.att_size()), 1e-6);
}

// Backward against central differences of L = Σ w ⊙ out(reference), for every `every`-th input
// element. Gradients accumulate onto random initial values; elements that are not q, k or v
// (padding columns, guard zone) must come back bit-identical.
void check_backward(Problem pr, int every = 1) {
  SCOPED_TRACE(pr.describe());
  const std::vector<float> w = random_vector(pr.out_size(), 99);
  const std::vector<float> init = random_vector(pr.data.size(), 98);
  const Outputs o = run_kernels(pr, &w, &init);

  auto loss = [&] {
    const Reference ref = reference_forward(pr);
    double l = 0;
    for (size_t i = 0; i < ref.out.size(); ++i) l += w[i] * ref.out[i];
    return l;
  };
  std::vector<float> analytic;
  std::vector<double> numeric;
  int seen = 0;
  for (size_t i = 0; i < pr.data.size(); ++i) {
    if (!pr.is_input[i]) {
      ASSERT_EQ(o.grads[i], init[i]) << "backward wrote to element " << i << ", which is not q, k or v";
      continue;
    }
    if (seen++ % every) continue;
    analytic.push_back(o.grads[i] - init[i]);
    numeric.push_back(central_difference(loss, pr.data.data(), i, kStep));
  }
  double scale = 0;
  for (double g : numeric) scale = std::max(scale, std::fabs(g));
  EXPECT_GT(scale, 0.0) << "degenerate problem: all gradients are zero";
  EXPECT_LT(nmse(analytic.data(), numeric.data(), numeric.size()), 1e-10);
  EXPECT_LT(max_abs_diff(analytic.data(), numeric.data(), numeric.size()), 1e-5 * std::max(1.0, scale));
}

// ---------------------------------------------------------------------------------------------

TEST(AttentionForward, MatchesReference) {
  for (MaskKind kind : {MaskKind::kCausal, MaskKind::kNone}) {
    for (bool fused : {false, true}) {
      check_forward(make_problem(2, 7, 7, 3, 5, kind, fused));     // odd everything
      check_forward(make_problem(1, 13, 13, 2, 12, kind, fused));  // D = one vector + a tail
      check_forward(make_problem(2, 33, 33, 2, 64, kind, fused));  // full SIMD tiles
      check_forward(make_problem(1, 70, 70, 1, 8, kind, fused));   // more than one query block
    }
    check_forward(make_problem(2, 5, 9, 2, 4, kind, false));  // Tq < Tk: cross attention / KV cache
  }
}

TEST(AttentionForward, SingleToken) {
  // One key: attention is 1 and out is v.
  Problem pr = make_problem(3, 1, 1, 2, 4, MaskKind::kCausal, true);
  check_forward(pr);
  const Outputs o = run_kernels(pr);
  for (int b = 0; b < 3; ++b)
    for (int c = 0; c < pr.C(); ++c) EXPECT_EQ(o.out[b * pr.C() + c], pr.v()[b * pr.dims.v_stride + c]);
  // One new query against a cache of 6 keys.
  check_forward(make_problem(2, 1, 6, 2, 4, MaskKind::kCausal, false));
}

TEST(AttentionForward, PaddingMasksKeysAndEmptyRows) {
  for (MaskKind kind : {MaskKind::kNone, MaskKind::kCausal}) {
    Problem pr = make_problem(3, 6, 6, 2, 5, kind, false);
    pr.lengths = {0, 3, 6};  // nothing visible; a short sequence; the full length
    check_forward(pr);
    const Outputs o = run_kernels(pr);
    for (int i = 0; i < pr.dims.Tq * pr.C(); ++i) ASSERT_EQ(o.out[i], 0.0f) << "length-0 batch must give zeros";
    // Every query row that sees a key sums to 1.
    for (size_t row = 0; row < pr.att_size() / pr.dims.Tk; ++row) {
      double sum = 0;
      for (int j = 0; j < pr.dims.Tk; ++j) sum += o.att[row * pr.dims.Tk + j];
      const bool empty_batch = row < static_cast<size_t>(pr.dims.H * pr.dims.Tq);
      EXPECT_NEAR(sum, empty_batch ? 0.0 : 1.0, 1e-6) << "row " << row;
    }
  }
  Problem pr = make_problem(2, 3, 8, 2, 6, MaskKind::kCausal, false);  // padding with a KV cache
  pr.lengths = {5, 8};
  check_forward(pr);
}

TEST(AttentionForward, KvCacheMatchesLastRowsOfFullCausal) {
  const int B = 2, T = 11, H = 2, D = 6, C = H * D, Tq = 4;
  Problem full = make_problem(B, T, T, H, D, MaskKind::kCausal, false);
  full.lengths = {T, T - 2};
  Problem last = make_problem(B, Tq, T, H, D, MaskKind::kCausal, false);
  last.lengths = full.lengths;
  // Same keys and values; the queries are the last Tq of the full ones.
  last.data.assign(last.data.size(), kSentinel);
  const std::vector<float> q = gather(full.q(), full.dims.q_stride, B, T, C, T - Tq);
  const std::vector<float> k = gather(full.k(), full.dims.k_stride, B, T, C);
  const std::vector<float> v = gather(full.v(), full.dims.v_stride, B, T, C);
  for (int r = 0; r < B * Tq; ++r)
    std::copy_n(q.data() + r * C, C, last.data.data() + last.q_off + r * last.dims.q_stride);
  for (int r = 0; r < B * T; ++r) {
    std::copy_n(k.data() + r * C, C, last.data.data() + last.k_off + r * last.dims.k_stride);
    std::copy_n(v.data() + r * C, C, last.data.data() + last.v_off + r * last.dims.v_stride);
  }
  check_forward(last);

  // Backward too: with dout zero on the first T - Tq rows, dk and dv are the same, and dq of the
  // last rows.
  std::vector<float> w_full(full.out_size(), 0.0f);
  const std::vector<float> w_last = random_vector(last.out_size(), 5);
  for (int b = 0; b < B; ++b)
    std::copy_n(w_last.data() + b * Tq * C, Tq * C, w_full.data() + (b * T + T - Tq) * C);
  const std::vector<float> zeros_full(full.data.size(), 0.0f), zeros_last(last.data.size(), 0.0f);
  const Outputs of = run_kernels(full, &w_full, &zeros_full);
  const Outputs ol = run_kernels(last, &w_last, &zeros_last);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < Tq; ++i) {
      const int fi = T - Tq + i;
      for (int c = 0; c < C; ++c)
        EXPECT_NEAR(ol.out[(b * Tq + i) * C + c], of.out[(b * T + fi) * C + c], 1e-6);
      for (int h = 0; h < H; ++h)
        for (int j = 0; j < T; ++j)
          EXPECT_NEAR(ol.att[((b * H + h) * Tq + i) * T + j], of.att[((b * H + h) * T + fi) * T + j], 1e-7);
      for (int c = 0; c < C; ++c)
        EXPECT_NEAR(ol.grads[last.q_off + (b * Tq + i) * last.dims.q_stride + c],
                    of.grads[full.q_off + (b * T + fi) * full.dims.q_stride + c], 1e-6);
    }
  for (int r = 0; r < B * T; ++r)
    for (int c = 0; c < C; ++c) {
      EXPECT_NEAR(ol.grads[last.k_off + r * last.dims.k_stride + c], of.grads[full.k_off + r * full.dims.k_stride + c],
                  1e-6);
      EXPECT_NEAR(ol.grads[last.v_off + r * last.dims.v_stride + c], of.grads[full.v_off + r * full.dims.v_stride + c],
                  1e-6);
    }
}

TEST(AttentionBackward, MatchesFiniteDifferences) {
  for (MaskKind kind : {MaskKind::kCausal, MaskKind::kNone}) {
    check_backward(make_problem(2, 7, 7, 3, 5, kind, false));
    check_backward(make_problem(1, 9, 9, 2, 12, kind, false));
    check_backward(make_problem(2, 4, 7, 2, 3, kind, false));  // Tq < Tk
  }
  check_backward(make_problem(2, 1, 1, 2, 4, MaskKind::kCausal, false));  // T = 1
  check_backward(make_problem(1, 1, 5, 3, 4, MaskKind::kCausal, false));  // one query, cached keys
}

TEST(AttentionBackward, LargerBlocksSubsampled) {
  // Full SIMD tiles, more than one query block, several row tiles: every 23rd element.
  check_backward(make_problem(1, 70, 70, 1, 16, MaskKind::kCausal, true), 23);
  check_backward(make_problem(1, 20, 20, 2, 64, MaskKind::kNone, false), 23);
  Problem pr = make_problem(2, 67, 67, 1, 8, MaskKind::kCausal, false);
  pr.lengths = {67, 61};
  check_backward(pr, 23);
}

TEST(AttentionBackward, PaddingAndEmptyBatch) {
  for (MaskKind kind : {MaskKind::kNone, MaskKind::kCausal}) {
    Problem pr = make_problem(3, 6, 6, 2, 5, kind, false);
    pr.lengths = {0, 3, 6};
    check_backward(pr);
  }
  Problem pr = make_problem(2, 3, 8, 2, 6, MaskKind::kCausal, false);
  pr.lengths = {5, 2};
  check_backward(pr);
}

TEST(AttentionBackward, FusedQkvLeavesOtherSlicesAlone) {
  // check_backward verifies every q, k, v element of the fused buffer against finite
  // differences (so no head spilled into a neighbour's slice) and that the padding columns
  // and guard zone keep their values.
  for (MaskKind kind : {MaskKind::kCausal, MaskKind::kNone}) check_backward(make_problem(2, 7, 7, 3, 5, kind, true));
  Problem pr = make_problem(2, 6, 6, 2, 4, MaskKind::kCausal, true);
  pr.lengths = {4, 0};
  check_backward(pr);
}

TEST(AttentionForward, ProbabilitiesAreOptional) {
  // Training passes att = null: out and stats are the same, and so is the backward built on them.
  for (const Problem& pr : {make_problem(2, 33, 33, 2, 16, MaskKind::kCausal, true),
                            make_problem(2, 3, 9, 2, 6, MaskKind::kCausal, false)}) {
    SCOPED_TRACE(pr.describe());
    const Outputs with = run_kernels(pr);
    std::vector<float> out(pr.out_size()), stats(attention_stats_size(pr.dims));
    attention_forward(out.data(), stats.data(), nullptr, pr.q(), pr.k(), pr.v(), pr.dims, pr.mask());
    EXPECT_EQ(std::memcmp(out.data(), with.out.data(), out.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(stats.data(), with.stats.data(), stats.size() * sizeof(float)), 0);
  }
}

TEST(AttentionForward, HeadMajorKeysAndValues) {
  // A KV cache keeps each head's keys together: (H, Tmax, D) with head stride Tmax·D and row
  // stride D. Same results as the same keys and values side by side in rows, forward and backward.
  const int B = 1, H = 3, D = 5, Tmax = 12;
  for (int Tq : {1, 4, 9}) {
    const int Tk = 9;
    Problem pr = make_problem(B, Tq, Tk, H, D, MaskKind::kCausal, false);
    SCOPED_TRACE(pr.describe());
    std::vector<float> kh(size_t(H) * Tmax * D, kSentinel), vh(kh.size(), kSentinel);
    for (int t = 0; t < Tk; ++t)
      for (int h = 0; h < H; ++h)
        for (int d = 0; d < D; ++d) {
          kh[(size_t(h) * Tmax + t) * D + d] = pr.k()[size_t(t) * pr.dims.k_stride + h * D + d];
          vh[(size_t(h) * Tmax + t) * D + d] = pr.v()[size_t(t) * pr.dims.v_stride + h * D + d];
        }
    AttentionDims dims = pr.dims;
    dims.k_stride = dims.v_stride = D, dims.k_head_stride = dims.v_head_stride = Tmax * D;
    const std::vector<float> w = random_vector(pr.out_size(), 3);
    const std::vector<float> zeros(pr.data.size(), 0.0f);
    const Outputs ref = run_kernels(pr, &w, &zeros);
    std::vector<float> out(pr.out_size()), stats(attention_stats_size(dims)), att(pr.att_size());
    attention_forward(out.data(), stats.data(), att.data(), pr.q(), kh.data(), vh.data(), dims, pr.mask());
    for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], ref.out[i], 1e-6) << "out[" << i << "]";
    for (size_t i = 0; i < att.size(); ++i) EXPECT_NEAR(att[i], ref.att[i], 1e-7) << "att[" << i << "]";
    std::vector<float> dq(pr.data.size(), 0.0f), dkh(kh.size(), 0.0f), dvh(vh.size(), 0.0f);
    attention_backward(dq.data() + pr.q_off, dkh.data(), dvh.data(), w.data(), stats.data(), pr.q(), kh.data(),
                       vh.data(), dims, pr.mask());
    for (int t = 0; t < Tk; ++t)
      for (int h = 0; h < H; ++h)
        for (int d = 0; d < D; ++d) {
          EXPECT_NEAR(dkh[(size_t(h) * Tmax + t) * D + d], ref.grads[pr.k_off + size_t(t) * pr.dims.k_stride + h * D + d],
                      1e-6);
          EXPECT_NEAR(dvh[(size_t(h) * Tmax + t) * D + d], ref.grads[pr.v_off + size_t(t) * pr.dims.v_stride + h * D + d],
                      1e-6);
        }
    for (int i = 0; i < Tq * pr.dims.q_stride; ++i) EXPECT_NEAR(dq[pr.q_off + i], ref.grads[pr.q_off + i], 1e-6);
  }
}

TEST(AttentionForward, HalfKeysAndValuesGiveTheirFloatsResult) {
  // A KV cache of type f16 hands the kernel halves: each widens exactly, so the output, the
  // statistics and the probabilities are those of the same values as floats, summed in the same
  // order: equal to float rounding (g++ fuses multiply-adds as it likes in each version). D 64
  // takes the 8-key and 8-vector paths of generation, D 5 the tails; Tq 9 the packed path of a
  // prompt; Hkv 2 of H 4 shares key/value heads.
  const int H = 4, Hkv = 2, Tk = 21, Tmax = 24;
  for (int D : {64, 5})
    for (int Tq : {1, 3, 9}) {
      SCOPED_TRACE("D " + std::to_string(D) + ", Tq " + std::to_string(Tq));
      const std::vector<float> q = random_vector(size_t(Tq) * H * D, 7);
      const std::vector<float> k = random_vector(size_t(Hkv) * Tmax * D, 8, 3.0f);
      const std::vector<float> v = random_vector(size_t(Hkv) * Tmax * D, 9, 3.0f);
      std::vector<uint16_t> kh(k.size()), vh(v.size());
      floats_to_halves(k.data(), static_cast<int>(k.size()), kh.data());
      floats_to_halves(v.data(), static_cast<int>(v.size()), vh.data());
      std::vector<float> kf(k.size()), vf(v.size());
      halves_to_floats(kh.data(), static_cast<int>(kh.size()), kf.data());
      halves_to_floats(vh.data(), static_cast<int>(vh.size()), vf.data());
      ASSERT_NE(kf, k);  // the rounding is real
      AttentionDims d{1, Tq, Tk, H, D, H * D, D, D, Tmax * D, Tmax * D};
      d.Hkv = Hkv;
      const AttentionMask causal{MaskKind::kCausal, nullptr};
      std::vector<float> out(size_t(Tq) * H * D), stats(attention_stats_size(d)), att(size_t(H) * Tq * Tk);
      std::vector<float> out_h = out, stats_h = stats, att_h = att;
      attention_forward(out.data(), stats.data(), att.data(), q.data(), kf.data(), vf.data(), d, causal);
      attention_forward(out_h.data(), stats_h.data(), att_h.data(), q.data(), kh.data(), vh.data(), d, causal);
      // Values of ~3 and scores of ~50: a few ulps; a key or value misread would be off by ~1.
      auto worst = [](const std::vector<float>& a, const std::vector<float>& b) {
        double m = 0.0;
        for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
        return m;
      };
      EXPECT_LT(worst(out, out_h), 1e-5);
      EXPECT_LT(worst(stats, stats_h), 1e-5);
      EXPECT_LT(worst(att, att_h), 1e-6);
    }
}

TEST(AttentionBackward, OverwriteIgnoresWhatTheGradientsHeld) {
  // GradStore::kOverwrite: dq, dk, dv get exactly what accumulating onto zeros gives, whatever
  // they held (NaN here), and nothing outside their H*D columns changes.
  for (Problem pr : {make_problem(2, 9, 9, 2, 8, MaskKind::kCausal, true),
                     make_problem(2, 70, 70, 1, 8, MaskKind::kCausal, true),
                     make_problem(2, 3, 8, 2, 6, MaskKind::kCausal, false)}) {
    if (pr.dims.Tq == 3) pr.lengths = {5, 2};  // keys that no query sees get zeros too
    SCOPED_TRACE(pr.describe());
    const std::vector<float> w = random_vector(pr.out_size(), 17);
    std::vector<float> zeros(pr.data.size(), 0.0f);
    const Outputs ref = run_kernels(pr, &w, &zeros);
    std::vector<float> grads(pr.data.size());
    for (size_t i = 0; i < grads.size(); ++i) grads[i] = pr.is_input[i] ? std::nanf("") : kSentinel;
    float* g = grads.data();
    attention_backward(g + pr.q_off, g + pr.k_off, g + pr.v_off, w.data(), ref.stats.data(), pr.q(), pr.k(), pr.v(),
                       pr.dims, pr.mask(), pr.p, pr.seed, GradStore::kOverwrite);
    for (size_t i = 0; i < grads.size(); ++i) {
      const float expected = pr.is_input[i] ? ref.grads[i] : kSentinel;
      ASSERT_EQ(std::memcmp(&grads[i], &expected, sizeof(float)), 0) << "element " << i;
    }
  }
}

TEST(AttentionBackward, AccumulateAddsExactlyOntoWhatTheGradientsHeld) {
  // GradStore::kAccumulate onto non-zero garbage G gives G + (what accumulating onto zeros gives),
  // bit for bit, in every q, k, v element; with kOverwrite (above) G would not matter. Several
  // query blocks, padding (keys that no query sees) and dropout included.
  Problem padded = make_problem(2, 3, 8, 2, 6, MaskKind::kCausal, false);
  padded.lengths = {5, 2};
  Problem dropped = make_problem(2, 9, 9, 2, 8, MaskKind::kNone, true);
  dropped.p = 0.25f, dropped.seed = 5;
  for (const Problem& pr : {make_problem(2, 70, 70, 1, 8, MaskKind::kCausal, true), padded, dropped}) {
    SCOPED_TRACE(pr.describe());
    const std::vector<float> w = random_vector(pr.out_size(), 19);
    const std::vector<float> zeros(pr.data.size(), 0.0f);
    const Outputs ref = run_kernels(pr, &w, &zeros);
    std::vector<float> garbage = random_vector(pr.data.size(), 20, 3.0f);
    for (size_t i = 0; i < garbage.size(); ++i) {
      garbage[i] = pr.is_input[i] ? garbage[i] + (garbage[i] < 0.0f ? -0.5f : 0.5f) : kSentinel;
    }
    const Outputs acc = run_kernels(pr, &w, &garbage);
    for (size_t i = 0; i < garbage.size(); ++i) {
      const float expected = pr.is_input[i] ? garbage[i] + ref.grads[i] : kSentinel;
      ASSERT_EQ(std::memcmp(&acc.grads[i], &expected, sizeof(float)), 0)
          << "element " << i << ": " << acc.grads[i] << ", expected " << garbage[i] << " + " << ref.grads[i];
    }
  }
}

TEST(AttentionBackward, Accumulates) {
  const Problem pr = make_problem(2, 9, 9, 2, 8, MaskKind::kCausal, true);
  const std::vector<float> w = random_vector(pr.out_size(), 7);
  const std::vector<float> zeros(pr.data.size(), 0.0f);
  const Outputs once = run_kernels(pr, &w, &zeros);
  const Outputs twice = run_kernels(pr, &w, &once.grads);
  double max_diff = 0, max_grad = 0;
  for (size_t i = 0; i < pr.data.size(); ++i) {
    max_diff = std::max(max_diff, std::fabs(twice.grads[i] - 2.0 * once.grads[i]));
    max_grad = std::max(max_grad, std::fabs(static_cast<double>(once.grads[i])));
  }
  EXPECT_GT(max_grad, 0.1);
  EXPECT_LT(max_diff, 1e-6 * max_grad);
}

TEST(AttentionDropout, ForwardMatchesReferenceMask) {
  for (MaskKind kind : {MaskKind::kCausal, MaskKind::kNone}) {
    Problem pr = make_problem(2, 9, 9, 3, 8, kind, true);
    pr.p = 0.3f, pr.seed = 1234;
    EXPECT_GT(reference_forward(pr).dropped, 10) << "dropout dropped (almost) nothing";
    check_forward(pr);
    pr = make_problem(2, 5, 11, 2, 16, kind, false);
    pr.lengths = {11, 7};
    pr.p = 0.5f, pr.seed = 77;
    check_forward(pr);
  }
}

TEST(AttentionDropout, BackwardMatchesFiniteDifferences) {
  for (MaskKind kind : {MaskKind::kCausal, MaskKind::kNone}) {
    Problem pr = make_problem(2, 7, 7, 2, 5, kind, true);
    pr.p = 0.25f, pr.seed = 42;
    check_backward(pr);
  }
  Problem pr = make_problem(2, 4, 9, 2, 6, MaskKind::kCausal, false);
  pr.lengths = {9, 5};
  pr.p = 0.4f, pr.seed = 7;
  check_backward(pr);
}

TEST(AttentionDropout, ZeroProbabilityIsNoDropout) {
  Problem pr = make_problem(2, 8, 8, 2, 8, MaskKind::kCausal, true);
  const Outputs a = run_kernels(pr);
  pr.seed = 987654321;  // p == 0: the seed must not matter
  const Outputs b = run_kernels(pr);
  EXPECT_EQ(std::memcmp(a.out.data(), b.out.data(), a.out.size() * sizeof(float)), 0);
  check_forward(pr);
}

TEST(AttentionDropout, SameResultWithOneAndTwoThreads) {
  Problem pr = make_problem(3, 37, 37, 3, 16, MaskKind::kCausal, true);
  pr.lengths = {37, 20, 1};
  pr.p = 0.2f, pr.seed = 5;
  const std::vector<float> w = random_vector(pr.out_size(), 3);
  const std::vector<float> init = random_vector(pr.data.size(), 4);
  const int saved = get_threads();
  set_threads(1);
  const Outputs one = run_kernels(pr, &w, &init);
  set_threads(2);
  const Outputs two = run_kernels(pr, &w, &init);
  set_threads(saved);
  EXPECT_EQ(std::memcmp(one.out.data(), two.out.data(), one.out.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(one.att.data(), two.att.data(), one.att.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(one.grads.data(), two.grads.data(), one.grads.size() * sizeof(float)), 0);
}

// ---------------------------------------------------------------------------------------------
// Grouped-query attention: Hkv key/value heads, each shared by H / Hkv consecutive query heads.

TEST(AttentionGqa, ForwardMatchesReference) {
  for (MaskKind kind : {MaskKind::kCausal, MaskKind::kNone}) {
    for (int H : {4, 6}) {
      for (int Hkv : {1, 2, H}) {
        check_forward(make_gqa_problem(2, 7, 7, H, Hkv, 5, kind, Layout::kSeparate));  // odd T and D
        check_forward(make_gqa_problem(2, 7, 7, H, Hkv, 5, kind, Layout::kFused));
        check_forward(make_gqa_problem(2, 3, 9, H, Hkv, 5, kind, Layout::kSeparate));    // generation: Tq < Tk
        check_forward(make_gqa_problem(1, 9, 13, H, Hkv, 7, kind, Layout::kHeadMajor));  // a KV cache
        check_forward(make_gqa_problem(1, 1, 13, H, Hkv, 7, kind, Layout::kHeadMajor));  // one new token
      }
    }
    // Several query blocks and full SIMD tiles.
    check_forward(make_gqa_problem(1, 70, 70, 4, 2, 16, kind, Layout::kFused));
  }
}

TEST(AttentionGqa, PaddingAndDropoutMatchReference) {
  for (MaskKind kind : {MaskKind::kNone, MaskKind::kCausal}) {
    Problem pr = make_gqa_problem(3, 6, 6, 4, 2, 5, kind, Layout::kSeparate);
    pr.lengths = {0, 3, 6};
    check_forward(pr);
    pr.p = 0.3f, pr.seed = 11;
    EXPECT_GT(reference_forward(pr).dropped, 10) << "dropout dropped (almost) nothing";
    check_forward(pr);
    pr = make_gqa_problem(1, 4, 11, 6, 2, 5, kind, Layout::kHeadMajor);
    pr.lengths = {8};
    pr.p = 0.4f, pr.seed = 3;
    check_forward(pr);
  }
}

TEST(AttentionGqa, BackwardMatchesFiniteDifferences) {
  // A key/value head's gradient sums over its group's query heads; keys or values outside the
  // heads (padding columns, the unused slots of a KV cache) must stay as they were.
  for (MaskKind kind : {MaskKind::kCausal, MaskKind::kNone}) {
    for (int H : {4, 6}) {
      for (int Hkv : {1, 2, H}) {
        check_backward(make_gqa_problem(2, 7, 7, H, Hkv, 5, kind, Layout::kSeparate));
        check_backward(make_gqa_problem(1, 4, 9, H, Hkv, 3, kind, Layout::kHeadMajor));  // Tq < Tk
      }
    }
    check_backward(make_gqa_problem(2, 7, 7, 4, 2, 5, kind, Layout::kFused));
  }
  check_backward(make_gqa_problem(1, 70, 70, 4, 2, 8, MaskKind::kCausal, Layout::kFused), 23);  // two query blocks
}

TEST(AttentionGqa, BackwardWithPaddingAndDropout) {
  for (MaskKind kind : {MaskKind::kNone, MaskKind::kCausal}) {
    Problem pr = make_gqa_problem(3, 6, 6, 4, 2, 5, kind, Layout::kSeparate);
    pr.lengths = {0, 3, 6};
    pr.p = 0.25f, pr.seed = 42;
    check_backward(pr);
  }
  Problem pr = make_gqa_problem(1, 4, 11, 6, 1, 5, MaskKind::kCausal, Layout::kHeadMajor);
  pr.lengths = {8};
  pr.p = 0.3f, pr.seed = 9;
  check_backward(pr);
}

TEST(AttentionGqa, AllHeadsOwnIsMultiHeadBitForBit) {
  // Hkv = H is the multi-head default (Hkv = 0) exactly: out, stats, att and every gradient, with
  // GradStore::kAccumulate and kOverwrite.
  Problem padded = make_problem(2, 70, 70, 3, 8, MaskKind::kCausal, true);
  padded.lengths = {70, 61};
  Problem dropped = make_problem(2, 9, 9, 2, 8, MaskKind::kNone, true);
  dropped.p = 0.25f, dropped.seed = 5;
  for (const Problem& mha : {padded, dropped, make_problem(2, 3, 8, 2, 6, MaskKind::kCausal, false)}) {
    SCOPED_TRACE(mha.describe());
    Problem gqa = mha;
    gqa.dims.Hkv = gqa.dims.H;
    const std::vector<float> w = random_vector(mha.out_size(), 21);
    const std::vector<float> init = random_vector(mha.data.size(), 22);
    const Outputs a = run_kernels(mha, &w, &init), b = run_kernels(gqa, &w, &init);
    EXPECT_EQ(std::memcmp(a.out.data(), b.out.data(), a.out.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(a.stats.data(), b.stats.data(), a.stats.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(a.att.data(), b.att.data(), a.att.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(a.grads.data(), b.grads.data(), a.grads.size() * sizeof(float)), 0);
    std::vector<float> ga(mha.data.size(), std::nanf("")), gb = ga;
    attention_backward(ga.data() + mha.q_off, ga.data() + mha.k_off, ga.data() + mha.v_off, w.data(), a.stats.data(),
                       mha.q(), mha.k(), mha.v(), mha.dims, mha.mask(), mha.p, mha.seed, GradStore::kOverwrite);
    attention_backward(gb.data() + gqa.q_off, gb.data() + gqa.k_off, gb.data() + gqa.v_off, w.data(), b.stats.data(),
                       gqa.q(), gqa.k(), gqa.v(), gqa.dims, gqa.mask(), gqa.p, gqa.seed, GradStore::kOverwrite);
    EXPECT_EQ(std::memcmp(ga.data(), gb.data(), ga.size() * sizeof(float)), 0);
  }
}

TEST(AttentionGqa, SameAsMultiHeadWithRepeatedKeysAndValues) {
  // Hugging Face's repeat_kv: multi-head attention whose head h has key/value head h / (H / Hkv)
  // gives the same out, stats and att bit for bit (each query head does the same operations on
  // the same numbers) and the same dq; a key/value head's dk, dv are its query heads' summed.
  const int H = 6, Hkv = 2, group = H / Hkv, D = 8;
  for (int Tq : {3, 11, 70}) {  // the generation path, one query block, two
    const int B = 2, Tk = Tq == 3 ? 9 : Tq;
    Problem gqa = make_gqa_problem(B, Tq, Tk, H, Hkv, D, MaskKind::kCausal, Layout::kSeparate);
    gqa.lengths = {Tk, Tk - 2};
    Problem mha = make_problem(B, Tq, Tk, H, D, MaskKind::kCausal, false);
    mha.lengths = gqa.lengths;
    SCOPED_TRACE(gqa.describe());
    for (int r = 0; r < B * Tq; ++r)
      std::copy_n(gqa.q() + r * gqa.dims.q_stride, H * D, mha.data.data() + mha.q_off + r * mha.dims.q_stride);
    for (int r = 0; r < B * Tk; ++r)
      for (int h = 0; h < H; ++h) {
        const int g = h / group;
        float* kh = mha.data.data() + mha.k_off + r * mha.dims.k_stride + h * D;
        float* vh = mha.data.data() + mha.v_off + r * mha.dims.v_stride + h * D;
        std::copy_n(gqa.k() + r * gqa.dims.k_stride + g * D, D, kh);
        std::copy_n(gqa.v() + r * gqa.dims.v_stride + g * D, D, vh);
      }
    const std::vector<float> w = random_vector(gqa.out_size(), 23);
    const std::vector<float> zeros_gqa(gqa.data.size(), 0.0f), zeros_mha(mha.data.size(), 0.0f);
    const Outputs og = run_kernels(gqa, &w, &zeros_gqa);
    const Outputs om = run_kernels(mha, &w, &zeros_mha);
    EXPECT_EQ(std::memcmp(og.out.data(), om.out.data(), og.out.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(og.stats.data(), om.stats.data(), og.stats.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(og.att.data(), om.att.data(), og.att.size() * sizeof(float)), 0);
    for (int r = 0; r < B * Tq; ++r)
      EXPECT_EQ(std::memcmp(og.grads.data() + gqa.q_off + r * gqa.dims.q_stride,
                            om.grads.data() + mha.q_off + r * mha.dims.q_stride, H * D * sizeof(float)),
                0)
          << "dq row " << r;
    for (int r = 0; r < B * Tk; ++r)
      for (int g = 0; g < Hkv; ++g)
        for (int d = 0; d < D; ++d) {
          double dk = 0, dv = 0;
          for (int h = g * group; h < (g + 1) * group; ++h) {
            dk += om.grads[mha.k_off + r * mha.dims.k_stride + h * D + d];
            dv += om.grads[mha.v_off + r * mha.dims.v_stride + h * D + d];
          }
          EXPECT_NEAR(og.grads[gqa.k_off + r * gqa.dims.k_stride + g * D + d], dk, 1e-6);
          EXPECT_NEAR(og.grads[gqa.v_off + r * gqa.dims.v_stride + g * D + d], dv, 1e-6);
        }
  }
}

TEST(AttentionGqa, SameResultWithOneAndTwoThreads) {
  Problem pr = make_gqa_problem(3, 37, 37, 6, 2, 16, MaskKind::kCausal, Layout::kFused);
  pr.lengths = {37, 20, 1};
  pr.p = 0.2f, pr.seed = 5;
  const std::vector<float> w = random_vector(pr.out_size(), 3);
  const std::vector<float> init = random_vector(pr.data.size(), 4);
  const int saved = get_threads();
  set_threads(1);
  const Outputs one = run_kernels(pr, &w, &init);
  set_threads(2);
  const Outputs two = run_kernels(pr, &w, &init);
  set_threads(saved);
  EXPECT_EQ(std::memcmp(one.out.data(), two.out.data(), one.out.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(one.att.data(), two.att.data(), one.att.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(one.grads.data(), two.grads.data(), one.grads.size() * sizeof(float)), 0);
}

TEST(AttentionGqaDeathTest, RefusesBadHeadCounts) {
  // A caller bug: the kernel stops (POTOP_CHECK) rather than read past a row or mix up heads.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Problem pr = make_gqa_problem(1, 4, 4, 4, 2, 3, MaskKind::kCausal, Layout::kSeparate);
  std::vector<float> out(pr.out_size()), stats(attention_stats_size(pr.dims)), grads(pr.data.size());
  auto run = [&](const AttentionDims& dims) {
    attention_forward(out.data(), stats.data(), nullptr, pr.q(), pr.k(), pr.v(), dims, pr.mask());
    attention_backward(grads.data() + pr.q_off, grads.data() + pr.k_off, grads.data() + pr.v_off, out.data(),
                       stats.data(), pr.q(), pr.k(), pr.v(), dims, pr.mask());
  };
  AttentionDims dims = pr.dims;
  dims.k_stride = dims.v_stride = 2 * 3;  // rows of Hkv*D = 6 floats, fewer than H*D = 12: enough
  run(dims);
  dims.k_stride = 5;  // fewer than Hkv*D
  EXPECT_DEATH(run(dims), "row stride is smaller");
  for (int Hkv : {-1, 3, 8}) {  // negative; H = 4 not a multiple of it; more K/V heads than query heads
    dims = pr.dims;
    dims.Hkv = Hkv;
    EXPECT_DEATH(run(dims), "multiple of the key/value heads") << "Hkv=" << Hkv;
  }
}

}  // namespace
}  // namespace potop
