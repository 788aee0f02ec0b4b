// Row-wise softmax and the fused softmax + cross-entropy over the vocabulary.
#pragma once

namespace potop {

// out (N, V) = softmax(inp) per row (max-subtracted; -inf entries get probability 0).
void softmax_forward(float* out, const float* inp, int N, int V);
// dinp += out ⊙ (dout - Σ_v dout ⊙ out)
void softmax_backward(float* dinp, const float* dout, const float* out, int N, int V);

// losses (N) = -log softmax(logits)[target]; probs (N, V) = softmax(logits).
// Rows whose target is negative are ignored (padding): loss 0. probs may alias logits.
void crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int N, int V);
// dlogits (N, V) = (probs - onehot(target)) * dlosses[n]; rows with target < 0 get 0.
// Unlike other backward kernels this WRITES (=) rather than accumulates, so that dlogits may
// alias probs and the (N, V) buffer — the largest activation — exists once.
void crossentropy_backward(float* dlogits, const float* probs, const int* targets, const float* dlosses, int N,
                           int V);

}  // namespace potop
