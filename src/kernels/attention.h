// Multi-head scaled dot-product attention, one kernel for every use:
//   out = softmax(Q Kᵀ / √D + mask) · V, per batch b and head h.
// Decoder self-attention (causal), encoder self-attention (padding), cross-attention and
// KV-cached generation (Tq new queries against Tk cached keys) all call it.
#pragma once
#include <cstdint>

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
};

struct AttentionMask {
  MaskKind kind = MaskKind::kCausal;
  // Padding mask, may be null: keys j >= key_lengths[b] are padding and get -inf before the
  // softmax. A query with no visible key gets all-zero attention and a zero output.
  const int* key_lengths = nullptr;
};

// out (B, Tq, H*D); att (B, H, Tq, Tk): the softmax probabilities (before dropout), saved for
// the backward pass. Both are overwritten in full; masked entries of att are exactly 0.
// Dropout with probability dropout_p is applied to the probabilities (mask from
// counter_uniform(dropout_seed, index into att), see dropout.h) before they multiply V:
// att[b,h,i,j] is kept iff counter_uniform(dropout_seed, ((b*H + h)*Tq + i)*Tk + j) >= dropout_p,
// and kept ones are scaled by 1 / (1 - dropout_p). dropout_p == 0 means no dropout at all.
void attention_forward(float* out, float* att, const float* q, const float* k, const float* v,
                       const AttentionDims& dims, const AttentionMask& mask, float dropout_p = 0.0f,
                       uint64_t dropout_seed = 0);

// Gradients accumulate (+=) into dq, dk, dv, which use the same strides as q, k, v (so they
// may be slices of one fused dqkv buffer). Deterministic for a given thread count; no heap
// allocation in steady state.
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* att, const float* q,
                        const float* k, const float* v, const AttentionDims& dims, const AttentionMask& mask,
                        float dropout_p = 0.0f, uint64_t dropout_seed = 0);

}  // namespace potop
