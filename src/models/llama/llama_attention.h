// Llama's self-attention sub-layer: causal, grouped-query, rotary, without biases.
//
//   [Q K V] = in · W_qkv                 one fused projection: H query heads, then H_kv key and
//                                        H_kv value heads (H_kv divides H)
//   Q, K ← RoPE(Q, K) at each row's position
//   y = concat_h softmax(Q_h K_g(h)ᵀ / √D + causal mask) V_g(h),   g(h) = h / (H / H_kv)
//   out = y · W_o
//
// Query heads h of one group share key/value head g(h), so a KV cache holds H_kv heads: H / H_kv
// times less memory per token than multi-head attention. Hugging Face keeps q_proj, k_proj and
// v_proj apart; here they are the column blocks of self_attn.qkv_proj (exports split them).
#pragma once
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "nn/layer.h"

namespace potop {

struct LlamaAttentionConfig {
  int n_embd = 0, n_head = 0, n_kv_head = 0;
  float rope_theta = 10000.0f;
  double proj_std = 0.02;  // init of W_o, which feeds the residual stream
};

class LlamaAttention final : public SubLayer {
 public:
  LlamaAttention(LayerBuilder& b, const std::string& prefix, const LlamaAttentionConfig& config);

  void forward(float* out, const float* in, const LayerPass& pass, const Frame& f) const override;
  void backward(float* din, const float* dout, const float* in, GradStore store, const LayerPass& pass,
                const Frame& f) const override;

  // The softmax probabilities (B, H, T, T) of the last forward pass (one without a KV cache),
  // recomputed from the saved projections into att.
  void probabilities(float* att, std::vector<float>& scratch, const LayerPass& pass, const Frame& f) const;

 private:
  int D() const { return c_.n_embd / c_.n_head; }
  int width() const { return (c_.n_head + 2 * c_.n_kv_head) * D(); }  // of a [Q K V] row
  AttentionDims dims(const LayerPass& pass) const;
  // Rotates the Q and K heads of the pass's rows (or their gradients, backward) at their positions.
  void rotate(float* qkv, const LayerPass& pass, bool backward) const;

  LlamaAttentionConfig c_;
  std::vector<float> frequencies_;
  int dropout_site_;
  int cache_slot_;
  ParamId qkv_w_, proj_w_;
  BufferId qkv_, stats_, y_;  // kept: [Q K V] after the rotation (N, width), the softmax statistics, y (N, C)
  BufferId dy_, dqkv_;        // scratch
};

}  // namespace potop
