// Additive (Bahdanau) attention scores of the bag-of-words LM (model/bow.h), with the causal
// "earlier words" mask: position t scores only the positions k < t before it.
//
//   scores[b, t, k] = v · tanh(keys[b, k] + queries[b, t])   for k < t,  -inf for k >= t
//
// keys = E(w_k)·W_key and queries = E(w_t)·W_query + bias are linear layers the model computes
// first, so that v·tanh(W[E(w_k); E(w_t)] + bias) costs one (T, H) projection per side instead
// of one per pair. tanh is recomputed in the backward pass rather than kept ((B, T, T, H)).
#pragma once
#include "kernels/grad_store.h"

namespace potop {

// scores (B, T, T); keys, queries (B, T, H); v (H).
void additive_score_forward(float* scores, const float* keys, const float* queries, const float* v, int B, int T,
                            int H);
// From dscores (B, T, T) (entries k >= t are not read):
//   dkeys[b, k]    += Σ_{t>k} dscores[b,t,k] · v ⊙ (1 - tanh²)     (= with GradStore::kOverwrite)
//   dqueries[b, t] += Σ_{k<t} dscores[b,t,k] · v ⊙ (1 - tanh²)     (= with GradStore::kOverwrite)
//   dv (H)         += Σ_{b,t,k<t} dscores[b,t,k] · tanh(keys[b,k] + queries[b,t])   (a parameter: always +=)
// The same result for every thread count.
void additive_score_backward(float* dkeys, float* dqueries, float* dv, const float* dscores, const float* keys,
                             const float* queries, const float* v, int B, int T, int H,
                             GradStore store = GradStore::kAccumulate);

}  // namespace potop
