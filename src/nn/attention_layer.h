// Multi-head attention as a sub-layer, for every use a Transformer has for it:
//
//   self-attention   [Q K V] = in·W_qkv + b_qkv        one fused projection, split into heads:
//                    H query heads, then H_kv key and H_kv value heads (H_kv divides H; grouped-
//                    query attention when fewer, Llama's), Q and K rotated (RoPE) when rotary
//   cross-attention  Q = in·W_q + b_q;  [K V] = memory·W_kv + b_kv   keys and values from another
//                    sequence (the encoder's output), the decoder's queries from its own
//   y = concat_h softmax(Q_h K_g(h)ᵀ / √d + mask) V_g(h);   out = y·W_o + b_o,   g(h) = h / (H / H_kv)
//
// The mask is causal (the look-ahead mask: query i sees keys j <= i) or not, and padded keys get
// -inf (the pass's lengths for self-attention, its memory_lengths for cross-attention). With a
// KV cache, a self-attention layer appends this pass's keys and values to its slot and attends
// over everything cached, so generation costs one position's work per token. A pass of B
// independent sequences (LayerPass::caches: potop serve's batch, beam search's hypotheses) takes
// one token per row, appends its key and value to that row's cache at the cache's length and
// attends over that cache: the projections run as one B-row batch, the attention row by row.
// Cross-attention in generation reads keys and values projected once per source sentence
// (LayerPass::memory_kv, one per row, so rows of different sentences share a pass).
//
// Query heads of one group share a key/value head, so a KV cache holds H_kv heads: H / H_kv times
// less memory per token. Parameters use Hugging Face's GPT-2 names by default: <prefix>.c_attn
// (C, (H + 2 H_kv)·D) and <prefix>.c_proj (C, C) for self-attention (a Llama's names are
// qkv_proj and o_proj: the config names them); <prefix>.q_attn (C, C), <prefix>.c_attn (C, 2C)
// and <prefix>.c_proj for cross-attention (GPT-2's "crossattention" layout).
#pragma once
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "nn/layer.h"

namespace potop {

struct AttentionConfig {
  int n_embd = 0;          // C = n_head · head_size
  int n_head = 0;
  bool bias = true;        // biases in the projections
  bool causal = true;      // look-ahead mask
  bool cross = false;      // keys and values from the pass's memory
  double proj_std = 0.02;  // init of W_o, which feeds the residual stream (GPT-2 scales it down)
  // Self-attention only: key/value heads (0: n_head), and RoPE's θ (0: no rotation; the head
  // size is then even).
  int n_kv_head = 0;
  float rope_theta = 0.0f;
  std::string qkv_name = "c_attn", proj_name = "c_proj";  // <prefix>.<name>.weight, .bias
};

class AttentionLayer final : public SubLayer {
 public:
  AttentionLayer(LayerBuilder& b, const std::string& prefix, const AttentionConfig& config);

  // out (N, C) = attention(in) · W_o + b_o
  void forward(float* out, const float* in, const LayerPass& pass, const Frame& f) const override;
  void backward(float* din, const float* dout, const float* in, GradStore store, const LayerPass& pass,
                const Frame& f) const override;

  // Cross-attention: this layer's keys and values of one source sentence, [K V] (S, 2C) =
  // memory (S, C)·W_kv + b_kv, into its slot of m — once per sentence for generation
  // (LayerPass::memory_kv), where a training pass projects the batch's memory itself.
  void project_memory(MemoryKV& m, const float* memory, const Frame& f) const;

  // The softmax probabilities (B, H, T, Tk) of the last forward pass (one without a KV cache),
  // recomputed from the saved projections into att — for pictures. scratch receives the
  // attention output and statistics this recomputation also produces.
  void probabilities(float* att, std::vector<float>& scratch, const LayerPass& pass, const Frame& f) const;

 private:
  AttentionDims dims(const LayerPass& pass) const;
  AttentionMask mask(const LayerPass& pass) const;
  int head_size() const { return c_.n_embd / c_.n_head; }
  int kv_heads() const { return c_.n_kv_head > 0 ? c_.n_kv_head : c_.n_head; }
  int width() const { return (c_.n_head + 2 * kv_heads()) * head_size(); }  // of a self-attention [Q K V] row
  // Rotates the Q and K heads of the pass's rows (or their gradients, backward) at their positions.
  void rotate(float* qkv, const LayerPass& pass, bool backward) const;

  AttentionConfig c_;
  std::vector<float> frequencies_;  // RoPE's, when rotary
  int dropout_site_;  // on the attention probabilities
  int cache_slot_ = -1;
  int memory_slot_ = -1;  // cross-attention: its keys and values in a MemoryKV
  // Self: qkv_w (C, 3C). Cross: q_w (C, C) and kv_w (C, 2C).
  ParamId qkv_w_ = kNoParam, qkv_b_ = kNoParam, q_w_ = kNoParam, q_b_ = kNoParam, kv_w_ = kNoParam, kv_b_ = kNoParam;
  ParamId proj_w_ = kNoParam, proj_b_ = kNoParam;
  // Kept: self: qkv (N, width); cross: q (N, C) and kv (B·S, 2C). Both: the softmax statistics and y.
  BufferId qkv_ = -1, q_ = -1, kv_ = -1, stats_, y_;
  // Backward scratch: d y (N, C), and d qkv (N, width) or d q (N, C) and d kv (B·S, 2C).
  BufferId dy_, dqkv_ = -1, dq_ = -1, dkv_ = -1;
};

}  // namespace potop
