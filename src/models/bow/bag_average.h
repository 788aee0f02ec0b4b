// The softmax-weighted bag of earlier words of the bag-of-words LM (model/bow.h): position t
// averages the vectors of the positions before it with weights that are a softmax of its scores.
//
//   weights[b, t, k] = softmax_{k<t}(scores[b, t, ·])[k]  for k < t,  0 for k >= t
//   out[b, t]        = Σ_{k<t} weights[b, t, k] · x[b, k]
//
// Position 0 has no earlier word: its weights are all 0 and out is the zero vector. Fixed
// weightings are scores too: all-equal scores give the plain mean, scores log IDF(w_k) give the
// IDF-weighted mean (softmax(log idf) = idf / Σ idf).
#pragma once
#include "kernels/grad_store.h"

namespace potop {

// out (B, T, C), weights (B, T, T); scores (B, T, T) (entries k >= t are not read); x (B, T, C).
void bag_average_forward(float* out, float* weights, const float* scores, const float* x, int B, int T, int C);
// From dout (B, T, C):
//   dx[b, k]          += Σ_{t>k} weights[b,t,k] · dout[b,t]                    (= with kOverwrite)
//   dscores[b, t, k]  += weights[b,t,k] · (dw[t,k] - Σ_j weights[b,t,j] dw[t,j]),  dw[t,k] = dout[b,t]·x[b,k]
//                        for k < t (= with kOverwrite, which also writes 0 at k >= t)
// dx or dscores may be null (not wanted: fixed weights have no score gradient).
void bag_average_backward(float* dx, float* dscores, const float* dout, const float* weights, const float* x, int B,
                          int T, int C, GradStore store = GradStore::kAccumulate);

}  // namespace potop
