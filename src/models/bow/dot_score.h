// Dot-product attention scores of the bag-of-words LM (model/bow.h), with the causal "earlier
// words" mask: position t (the previous word w_{i-1}) scores only the positions k < t.
//
//   scores[b, t, k] = scale · x[b, k] · x[b, t]   for k < t,  -inf for k >= t
//
// Query and key are the same embedding x = E(w), so each row of x receives gradient both as a
// query and as a key.
#pragma once
#include "kernels/grad_store.h"

namespace potop {

// scores (B, T, T); x (B, T, C).
void dot_score_forward(float* scores, const float* x, float scale, int B, int T, int C);
// dx[b, t] += scale · (Σ_{k<t} dscores[b,t,k] x[b,k] + Σ_{u>t} dscores[b,u,t] x[b,u])
// (= with GradStore::kOverwrite). Entries k >= t of dscores are not read.
void dot_score_backward(float* dx, const float* dscores, const float* x, float scale, int B, int T, int C,
                        GradStore store = GradStore::kAccumulate);

}  // namespace potop
