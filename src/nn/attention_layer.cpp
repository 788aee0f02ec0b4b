#include "nn/attention_layer.h"

#include <vector>

#include "core/error.h"
#include "core/profile.h"
#include "kernels/linear.h"
#include "kernels/rope.h"

namespace potop {

AttentionLayer::AttentionLayer(LayerBuilder& b, const std::string& prefix, const AttentionConfig& config)
    : c_(config), dropout_site_(b.claim_dropout_site()) {
  POTOP_CHECK(c_.n_head > 0 && c_.n_embd % c_.n_head == 0, "n_embd must be divisible by n_head");
  POTOP_CHECK(c_.n_kv_head >= 0 && c_.n_head % kv_heads() == 0 && (!c_.cross || kv_heads() == c_.n_head),
              "the query heads are groups of the key/value heads");
  POTOP_CHECK(c_.rope_theta == 0.0f || (!c_.cross && head_size() % 2 == 0), "rotary heads are even");
  if (c_.rope_theta != 0.0f) frequencies_ = rope_frequencies(head_size(), c_.rope_theta);
  const int64_t C = c_.n_embd;
  auto projection = [&](const std::string& name, int64_t out, double std, ParamId& w, ParamId& bias) {
    w = b.matrix(prefix + "." + name + ".weight", static_cast<int>(C), static_cast<int>(out), TensorInit::normal(std));
    if (c_.bias) bias = b.param(prefix + "." + name + ".bias", {out}, TensorInit::zeros(), false);
  };
  if (c_.cross) {
    projection("q_attn", C, 0.02, q_w_, q_b_);
    projection(c_.qkv_name, 2 * C, 0.02, kv_w_, kv_b_);
  } else {
    projection(c_.qkv_name, width(), 0.02, qkv_w_, qkv_b_);
  }
  projection(c_.proj_name, C, c_.proj_std, proj_w_, proj_b_);

  ActivationPlan& a = b.acts;
  if (c_.cross) {
    q_ = a.keep("q", C);
    kv_ = a.keep("kv", 2 * C, Rows::kMemory);
    dq_ = a.scratch("d q", C);
    dkv_ = a.scratch("d kv", 2 * C, Rows::kMemory);
    memory_slot_ = b.claim_memory_slot();
  } else {
    qkv_ = a.keep("qkv", width());
    dqkv_ = a.scratch("d qkv", width());
    if (c_.causal) cache_slot_ = b.claim_cache_slot();
  }
  stats_ = a.keep("attention statistics", 2 * int64_t{c_.n_head});  // (B, H, T, 2): 2H floats a row
  y_ = a.keep("attention output", C);
  dy_ = a.scratch("d attention output", C);
}

AttentionDims AttentionLayer::dims(const LayerPass& pass) const {
  const int C = c_.n_embd, H = c_.n_head, D = C / H, W = width();
  if (c_.cross) return AttentionDims{pass.B, pass.T, pass.S, H, D, C, 2 * C, 2 * C};
  AttentionDims d{pass.B, pass.T, pass.pos0 + pass.T, H, D, W, W, W};
  d.Hkv = kv_heads();
  return d;
}

void AttentionLayer::rotate(float* qkv, const LayerPass& pass, bool backward) const {
  const int N = pass.rows();
  thread_local std::vector<int> positions;
  positions.resize(N);
  for (int r = 0; r < N; ++r) positions[r] = pass.caches ? pass.caches[r]->length : pass.pos0 + r % pass.T;
  // The H query heads and the H_kv key heads are the first H + H_kv heads of each row.
  const int heads = c_.n_head + kv_heads();
  if (backward) rope_backward(qkv, N, width(), heads, head_size(), positions.data(), frequencies_.data());
  else rope_forward(qkv, N, width(), heads, head_size(), positions.data(), frequencies_.data());
}

AttentionMask AttentionLayer::mask(const LayerPass& pass) const {
  return {c_.causal ? MaskKind::kCausal : MaskKind::kNone, c_.cross ? pass.memory_lengths : pass.lengths};
}

void AttentionLayer::forward(float* out, const float* in, const LayerPass& pass, const Frame& f) const {
  const int N = pass.rows(), C = c_.n_embd;
  const float *q, *k, *v;
  if (c_.cross) {
    float* qb = f.buffer(q_);
    POTOP_PROFILED("q", linear(f, qb, in, q_w_, q_b_, N, C, C));  // Q = in·W_q + b_q
    if (pass.memory_kv) {  // generation: each sequence's T queries against its sentence's [K V]
      POTOP_CHECK(pass.dropout == 0.0f && !pass.d_memory, "projected memory is for generation");
      const int H = c_.n_head, D = C / H, T = pass.T;
      float* y = f.buffer(y_);
      for (int b = 0; b < pass.B; ++b) {
        const MemoryKV& m = *pass.memory_kv[b];
        const float* kv = m.slot(memory_slot_);
        const AttentionDims d{1, T, m.S, H, D, C, 2 * C, 2 * C};
        attention_forward(y + size_t(b) * T * C, f.buffer(stats_) + size_t(b) * 2 * H * T, nullptr,
                          qb + size_t(b) * T * C, kv, kv + C, d, AttentionMask{MaskKind::kNone, nullptr});
      }
      POTOP_PROFILED("attn proj", linear(f, out, y, proj_w_, proj_b_, N, C, C));
      return;
    }
    float* kv = f.buffer(kv_);
    POTOP_PROFILED("kv", linear(f, kv, pass.memory, kv_w_, kv_b_, pass.memory_rows(), C, 2 * C));  // [K V] = memory·W_kv + b_kv
    q = qb, k = kv, v = kv + C;
  } else {
    float* qkv = f.buffer(qkv_);
    POTOP_PROFILED("qkv", linear(f, qkv, in, qkv_w_, qkv_b_, N, C, width()));  // [Q K V] = in·W + b
    if (!frequencies_.empty()) POTOP_PROFILED("rope", rotate(qkv, pass, false));  // Q, K ← RoPE(Q, K)
    q = qkv, k = qkv + C, v = k + kv_heads() * head_size();
  }
  float* y = f.buffer(y_);
  const int H = c_.n_head, D = C / H, W = width();
  // Generation: this pass's keys and values (H_kv heads) go into the cache, and the queries
  // attend over everything cached.
  auto cached = [&](int Tq, int Tk) {
    AttentionDims d{1, Tq, Tk, H, D, W};
    d.Hkv = kv_heads();
    return d;
  };
  if (pass.cache && !c_.cross) {  // append this pass's keys and values, then attend over all of them
    POTOP_CHECK(cache_slot_ >= 0 && pass.B == 1, "a KV cache is for batch-1 causal self-attention");
    KVCache& cache = *pass.cache;
    for (int t = 0; t < pass.T; ++t) cache.store(cache_slot_, pass.pos0 + t, k + size_t(t) * W, v + size_t(t) * W);
    POTOP_PROFILED("attention", cache.attend(cache_slot_, y, f.buffer(stats_), q, cached(pass.T, pass.pos0 + pass.T)));
  } else if (pass.caches && !c_.cross) {  // batched decoding: every row attends over its own sequence's cache
    POTOP_CHECK(cache_slot_ >= 0 && pass.T == 1 && pass.dropout == 0.0f, "batched decoding is for causal self-attention");
    for (int b = 0; b < pass.B; ++b) {
      KVCache& cache = *pass.caches[b];
      const size_t row = size_t(b) * W;
      cache.store(cache_slot_, cache.length, k + row, v + row);
      cache.attend(cache_slot_, y + size_t(b) * C, f.buffer(stats_) + size_t(b) * 2 * H, q + row,
                   cached(1, cache.length + 1));
    }
  } else {
    POTOP_PROFILED("attention", attention_forward(y, f.buffer(stats_), nullptr, q, k, v, dims(pass), mask(pass),
                                                  pass.dropout, pass.site_seed(dropout_site_)));  // softmax(qkᵀ/√d)·v
  }
  POTOP_PROFILED("attn proj", linear(f, out, y, proj_w_, proj_b_, N, C, C));  // heads -> C
}

void AttentionLayer::backward(float* din, const float* dout, const float* in, GradStore store, const LayerPass& pass,
                              const Frame& f) const {
  const int N = pass.rows(), C = c_.n_embd;
  constexpr GradStore kSet = GradStore::kOverwrite;  // into scratch that holds nothing yet
  float* dy = f.buffer(dy_);
  // out = y·W_o + b_o
  POTOP_PROFILED("attn proj", linear_backward(dy, f.grad(proj_w_), f.grad(proj_b_), dout, f.buffer(y_),
                                              f.value(proj_w_), N, C, C, WeightLayout::kInOut, kSet));
  const AttentionDims d = dims(pass);
  if (c_.cross) {
    const float* q = f.buffer(q_);
    const float* kv = f.buffer(kv_);
    float* dq = f.buffer(dq_);
    float* dkv = f.buffer(dkv_);
    // y = softmax(qkᵀ/√d)·v
    POTOP_PROFILED("attention", attention_backward(dq, dkv, dkv + C, dy, f.buffer(stats_), q, kv, kv + C, d,
                                                   mask(pass), pass.dropout, pass.site_seed(dropout_site_), kSet));
    // [K V] = memory·W_kv + b_kv: the memory's gradient sums over every layer that reads it
    POTOP_PROFILED("kv", linear_backward(pass.d_memory, f.grad(kv_w_), f.grad(kv_b_), dkv, pass.memory,
                                         f.value(kv_w_), pass.memory_rows(), C, 2 * C));
    // Q = in·W_q + b_q
    POTOP_PROFILED("q", linear_backward(din, f.grad(q_w_), f.grad(q_b_), dq, in, f.value(q_w_), N, C, C,
                                        WeightLayout::kInOut, store));
  } else {
    const float* qkv = f.buffer(qkv_);
    float* dqkv = f.buffer(dqkv_);
    const int v_col = C + kv_heads() * head_size();
    // y = softmax(qkᵀ/√d)·v: a shared key/value head sums its query heads' gradients
    POTOP_PROFILED("attention", attention_backward(dqkv, dqkv + C, dqkv + v_col, dy, f.buffer(stats_), qkv,
                                                   qkv + C, qkv + v_col, d, mask(pass), pass.dropout,
                                                   pass.site_seed(dropout_site_), kSet));
    if (!frequencies_.empty()) POTOP_PROFILED("rope", rotate(dqkv, pass, true));  // Q, K ← RoPE(Q, K)
    // [Q K V] = in·W + b
    POTOP_PROFILED("qkv", linear_backward(din, f.grad(qkv_w_), f.grad(qkv_b_), dqkv, in, f.value(qkv_w_), N, C,
                                          width(), WeightLayout::kInOut, store));
  }
}

void AttentionLayer::project_memory(MemoryKV& m, const float* memory, const Frame& f) const {
  POTOP_CHECK(c_.cross && m.width == c_.n_embd && memory_slot_ >= 0, "project_memory is for cross-attention");
  const int C = c_.n_embd;
  // [K V] = memory·W_kv + b_kv
  POTOP_PROFILED("kv", linear(f, m.slot(memory_slot_), memory, kv_w_, kv_b_, m.S, C, 2 * C));
}

void AttentionLayer::probabilities(float* att, std::vector<float>& scratch, const LayerPass& pass,
                                   const Frame& f) const {
  POTOP_CHECK(!pass.cache && !pass.caches, "attention probabilities are recomputed from a pass without a KV cache");
  const AttentionDims d = dims(pass);
  const int C = c_.n_embd;
  const size_t out_floats = size_t(pass.rows()) * C;
  scratch.resize(out_floats + attention_stats_size(d));
  const float *q, *k, *v;
  if (c_.cross) {
    q = f.buffer(q_), k = f.buffer(kv_), v = k + C;
  } else {
    q = f.buffer(qkv_), k = q + C, v = k + kv_heads() * head_size();
  }
  attention_forward(scratch.data(), scratch.data() + out_floats, att, q, k, v, d, mask(pass));
}

}  // namespace potop
