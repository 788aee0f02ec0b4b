#include "models/llama/llama_attention.h"


#include "core/error.h"
#include "core/profile.h"
#include "kernels/linear.h"
#include "models/llama/rope.h"

namespace potop {

LlamaAttention::LlamaAttention(LayerBuilder& b, const std::string& prefix, const LlamaAttentionConfig& config)
    : c_(config), dropout_site_(b.claim_dropout_site()), cache_slot_(b.claim_cache_slot()) {
  POTOP_CHECK(c_.n_head > 0 && c_.n_embd % c_.n_head == 0 && c_.n_kv_head > 0 && c_.n_head % c_.n_kv_head == 0,
              "bad attention heads");
  frequencies_ = rope_frequencies(D(), c_.rope_theta);
  const int C = c_.n_embd;
  qkv_w_ = b.matrix(prefix + ".qkv_proj.weight", C, width(), TensorInit::normal(0.02));
  proj_w_ = b.matrix(prefix + ".o_proj.weight", C, C, TensorInit::normal(c_.proj_std));
  ActivationPlan& a = b.acts;
  qkv_ = a.keep("qkv", width());
  stats_ = a.keep("attention statistics", 2 * int64_t{c_.n_head});
  y_ = a.keep("attention output", C);
  dy_ = a.scratch("d attention output", C);
  dqkv_ = a.scratch("d qkv", width());
}

AttentionDims LlamaAttention::dims(const LayerPass& pass) const {
  const int W = width();
  AttentionDims d{pass.B, pass.T, pass.pos0 + pass.T, c_.n_head, D(), W, W, W};
  d.Hkv = c_.n_kv_head;
  return d;
}

void LlamaAttention::rotate(float* qkv, const LayerPass& pass, bool backward) const {
  const int N = pass.rows();
  thread_local std::vector<int> positions;
  positions.resize(N);
  for (int r = 0; r < N; ++r)
    positions[r] = pass.caches ? pass.caches[r]->length : pass.pos0 + r % pass.T;
  // The H query heads and the H_kv key heads are the first H + H_kv heads of each row.
  const int heads = c_.n_head + c_.n_kv_head;
  if (backward) rope_backward(qkv, N, width(), heads, D(), positions.data(), frequencies_.data());
  else rope_forward(qkv, N, width(), heads, D(), positions.data(), frequencies_.data());
}

void LlamaAttention::forward(float* out, const float* in, const LayerPass& pass, const Frame& f) const {
  const int N = pass.rows(), C = c_.n_embd, W = width(), H = c_.n_head, Hkv = c_.n_kv_head, D = this->D();
  float* qkv = f.buffer(qkv_);
  float* y = f.buffer(y_);
  POTOP_PROFILED("qkv", linear(f, qkv, in, qkv_w_, kNoParam, N, C, W));  // [Q K V] = in·W
  POTOP_PROFILED("rope", rotate(qkv, pass, false));                       // Q, K ← RoPE(Q, K)
  const int k_col = H * D, v_col = (H + Hkv) * D;
  // Generation: this pass's keys and values go into the cache (H_kv heads), and the queries
  // attend over everything cached.
  auto cached_dims = [&](int Tq, int Tk) {
    AttentionDims d{1, Tq, Tk, H, D, W};
    d.Hkv = Hkv;
    return d;
  };
  if (pass.cache) {
    POTOP_CHECK(pass.B == 1, "a KV cache is for batch 1");
    KVCache& cache = *pass.cache;
    for (int t = 0; t < pass.T; ++t) {
      const float* row = qkv + size_t(t) * W;
      cache.store(cache_slot_, pass.pos0 + t, row + k_col, row + v_col);
    }
    POTOP_PROFILED("attention", cache.attend(cache_slot_, y, f.buffer(stats_), qkv, cached_dims(pass.T, pass.pos0 + pass.T)));
  } else if (pass.caches) {  // batched decoding: every row attends over its own sequence's cache
    POTOP_CHECK(pass.T == 1 && pass.dropout == 0.0f, "batched decoding takes one token per row");
    for (int b = 0; b < pass.B; ++b) {
      KVCache& cache = *pass.caches[b];
      const float* row = qkv + size_t(b) * W;
      cache.store(cache_slot_, cache.length, row + k_col, row + v_col);
      cache.attend(cache_slot_, y + size_t(b) * C, f.buffer(stats_) + size_t(b) * 2 * H, row,
                   cached_dims(1, cache.length + 1));
    }
  } else {
    // y = softmax(QKᵀ/√D + causal mask)·V, query head h reading key/value head h / (H / H_kv)
    POTOP_PROFILED("attention", attention_forward(y, f.buffer(stats_), nullptr, qkv, qkv + k_col, qkv + v_col,
                                                  dims(pass), AttentionMask{MaskKind::kCausal, nullptr},
                                                  pass.dropout, pass.site_seed(dropout_site_)));
  }
  POTOP_PROFILED("attn proj", linear(f, out, y, proj_w_, kNoParam, N, C, C));  // out = y·W_o
}

void LlamaAttention::backward(float* din, const float* dout, const float* in, GradStore store, const LayerPass& pass,
                              const Frame& f) const {
  const int N = pass.rows(), C = c_.n_embd, W = width(), H = c_.n_head, Hkv = c_.n_kv_head, D = this->D();
  constexpr GradStore kSet = GradStore::kOverwrite;  // into scratch that holds nothing yet
  float* dy = f.buffer(dy_);
  float* dqkv = f.buffer(dqkv_);
  const float* qkv = f.buffer(qkv_);
  // out = y·W_o
  POTOP_PROFILED("attn proj", linear_backward(dy, f.grad(proj_w_), nullptr, dout, f.buffer(y_), f.value(proj_w_), N,
                                              C, C, WeightLayout::kInOut, kSet));
  // y = softmax(QKᵀ/√D)·V: the shared key/value heads sum their query heads' gradients
  const int k_col = H * D, v_col = (H + Hkv) * D;
  POTOP_PROFILED("attention", attention_backward(dqkv, dqkv + k_col, dqkv + v_col, dy, f.buffer(stats_), qkv,
                                                 qkv + k_col, qkv + v_col, dims(pass),
                                                 AttentionMask{MaskKind::kCausal, nullptr}, pass.dropout,
                                                 pass.site_seed(dropout_site_), kSet));
  POTOP_PROFILED("rope", rotate(dqkv, pass, true));  // Q, K ← RoPE(Q, K)
  // [Q K V] = in·W
  POTOP_PROFILED("qkv", linear_backward(din, f.grad(qkv_w_), nullptr, dqkv, in, f.value(qkv_w_), N, C, W,
                                        WeightLayout::kInOut, store));
}

void LlamaAttention::probabilities(float* att, std::vector<float>& scratch, const LayerPass& pass,
                                   const Frame& f) const {
  POTOP_CHECK(!pass.cache && !pass.caches, "attention probabilities are recomputed from a pass without a KV cache");
  const AttentionDims d = dims(pass);
  const size_t out_floats = size_t(pass.rows()) * c_.n_embd;
  scratch.resize(out_floats + attention_stats_size(d));
  const float* qkv = f.buffer(qkv_);
  const int H = c_.n_head, Hkv = c_.n_kv_head, D = this->D();
  attention_forward(scratch.data(), scratch.data() + out_floats, att, qkv, qkv + H * D, qkv + (H + Hkv) * D, d,
                    AttentionMask{MaskKind::kCausal, nullptr});
}

}  // namespace potop
