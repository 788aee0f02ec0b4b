// Row-wise softmax and the fused softmax + cross-entropy over the vocabulary.
#pragma once

#include "kernels/grad_store.h"

namespace potop {

// out (N, V) = softmax(inp) per row (max-subtracted; -inf entries get probability 0).
void softmax_forward(float* out, const float* inp, int N, int V);
// dinp (N, V) += out ⊙ (dout - Σ_v dout ⊙ out)   (= with GradStore::kOverwrite)
void softmax_backward(float* dinp, const float* dout, const float* out, int N, int V,
                      GradStore store = GradStore::kAccumulate);

// losses (N) = -Σ_v q_v log softmax(logits)_v against the smoothed target distribution
// q = (1 - ε)·onehot(target) + ε/V (label smoothing ε, PyTorch's cross_entropy(label_smoothing=ε);
// ε = 0: -log softmax(logits)[target]); probs (N, V) = softmax(logits).
// Rows whose target is negative are ignored (padding): loss 0. probs may alias logits.
void crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int N, int V,
                          float label_smoothing = 0.0f);
// dlogits (N, V) += (probs - q) * dlosses[n]  (= with GradStore::kOverwrite), q as above; rows
// with target < 0 get no gradient (0 with kOverwrite). dlogits may alias probs only with
// kOverwrite (checked), so that the (N, V) buffer — the largest activation — exists once.
void crossentropy_backward(float* dlogits, const float* probs, const int* targets, const float* dlosses, int N,
                           int V, GradStore store = GradStore::kAccumulate, float label_smoothing = 0.0f);

}  // namespace potop
