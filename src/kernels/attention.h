// Multi-head scaled dot-product attention, one kernel for every use:
//   out = softmax(Q Kᵀ / √D + mask) · V, per batch b and head h.
// Grouped-query attention (GQA, as Llama's) is the same with fewer key/value heads than query
// heads: consecutive query heads share one, which shrinks the KV cache by the group size.
// Decoder self-attention (causal), encoder self-attention (padding), cross-attention and
// KV-cached generation (Tq new queries against Tk cached keys) all call it.
//
// Like FlashAttention, training never stores the (B, H, Tq, Tk) probabilities: the forward pass
// keeps two numbers per query row (the row's maximum score and the softmax's normaliser) and the
// backward pass recomputes the probabilities from them, a block of queries at a time.
#pragma once
#include <cstdint>

#include "kernels/grad_store.h"

namespace potop {

enum class MaskKind {
  kNone,    // every query sees every (non-padding) key
  kCausal,  // query i sees key j iff j <= i + (Tk - Tq): the look-ahead mask; with Tq < Tk the
            // queries are the last Tq positions (generation with a KV cache)
};

struct AttentionDims {
  int B = 0, Tq = 0, Tk = 0, H = 0, D = 0;
  // Row strides, in floats, between consecutive tokens of q, k, v. With the fused QKV
  // projection (B, T, 3C) all three are 3C and q, k, v point at offsets 0, C, 2C of the same
  // buffer; head h of a token lives at [h*D, (h+1)*D). out is always contiguous (B, Tq, H*D).
  int q_stride = 0, k_stride = 0, v_stride = 0;
  // For the batch stride, q/k/v rows of batch b start at b*Tq*q_stride and b*Tk*k_stride.
  // Floats from head h to head h + 1 within k and v; 0 means D (the heads side by side in a
  // row, as above). A KV cache keeps each head's keys together instead (head stride Tmax·D, row
  // stride D), so that generation reads them front to back.
  int k_head_stride = 0, v_head_stride = 0;
  // Key/value heads; 0 means H (every query head its own). H must be a multiple of it: query
  // head h reads key/value head h / (H / Hkv), the grouping of Hugging Face's repeat_kv and
  // llama.cpp, so a checkpoint's K/V projections keep their meaning. The head strides above and
  // the [g*D, (g+1)*D) slots of a row count key/value heads, so a row of k or v holds Hkv*D.
  int Hkv = 0;
};

struct AttentionMask {
  MaskKind kind = MaskKind::kCausal;
  // Padding mask, may be null: keys j >= key_lengths[b] are padding and get -inf before the
  // softmax. A query with no visible key gets all-zero attention and a zero output.
  const int* key_lengths = nullptr;
};

// Floats of the softmax statistics that attention_forward saves for attention_backward.
inline long attention_stats_size(const AttentionDims& d) { return 2L * d.B * d.H * d.Tq; }

// out (B, Tq, H*D), overwritten in full.
// stats (B, H, Tq, 2): per query row, the largest scaled score m and 1 / Σ_j exp(s_j - m), from
//   which attention_backward recomputes the probabilities exactly as the forward pass made them.
// att (B, H, Tq, Tk) or null: when given, the softmax probabilities (before dropout) are written
//   there too, masked entries exactly 0 — for inspection and tests; training passes null.
// Dropout with probability dropout_p is applied to the probabilities (mask from
// counter_uniform(dropout_seed, index into att), see dropout.h) before they multiply V:
// att[b,h,i,j] is kept iff counter_uniform(dropout_seed, ((b*H + h)*Tq + i)*Tk + j) >= dropout_p,
// and kept ones are scaled by 1 / (1 - dropout_p). dropout_p == 0 means no dropout at all.
void attention_forward(float* out, float* stats, float* att, const float* q, const float* k, const float* v,
                       const AttentionDims& dims, const AttentionMask& mask, float dropout_p = 0.0f,
                       uint64_t dropout_seed = 0);

// The same over keys and values stored as IEEE halves (f32_to_f16's bits: a KV cache of type
// f16, half the bytes a decoding step reads). Each half widens to float exactly as it is read,
// so the result is attention_forward's over those values as floats, in the same order of sums,
// to float rounding (g++ may fuse a multiply and an add into an FMA in one version of the loop
// and not in the other). Inference only: no dropout.
void attention_forward(float* out, float* stats, float* att, const float* q, const uint16_t* k, const uint16_t* v,
                       const AttentionDims& dims, const AttentionMask& mask);

// dq (B, Tq, H*D) += ∂L/∂q;  dk, dv (B, Tk, Hkv*D) += ∂L/∂k, ∂L/∂v, with L = Σ dout ⊙ out
//   (= with GradStore::kOverwrite; keys that no query sees then get 0); a K/V head's gradient
//   sums over the query heads of its group
// dq, dk, dv use the same strides as q, k, v (so they may be slices of one fused dqkv buffer;
// only the heads' columns are touched: H*D of a dq row, Hkv*D of a dk or dv row). stats are the
// forward pass's. Deterministic for a given thread count; no heap allocation in steady state.
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* stats, const float* q,
                        const float* k, const float* v, const AttentionDims& dims, const AttentionMask& mask,
                        float dropout_p = 0.0f, uint64_t dropout_seed = 0,
                        GradStore store = GradStore::kAccumulate);

}  // namespace potop
