// Pooling a batch's rows into fewer rows, for the heads that read only some positions: BERT's
// masked-LM head reads the masked positions, a classifier's head one vector per sequence — the
// [CLS] position (BERT), the last real token (GPT-1) or the mean over the real tokens.
#pragma once

#include "kernels/grad_store.h"

namespace potop {

// out (M, C) = x[index[i]] for each of the M indices (rows of x).
void gather_rows_forward(float* out, const float* x, const int* index, int M, int C);
// dx[index[i]] += dout[i] (dx = 0 first with kOverwrite, so rows no index names get zero). An
// index may repeat: its gradients add up.
void gather_rows_backward(float* dx, const float* dout, const int* index, int M, int C, int dx_rows,
                          GradStore store = GradStore::kAccumulate);

// out (B, C) = mean over t < lengths[b] of x[b, t], x (B, T, C); lengths null: all T.
void mean_rows_forward(float* out, const float* x, const int* lengths, int B, int T, int C);
// dx[b, t] += dout[b] / lengths[b] for t < lengths[b]; padding rows get nothing (zero with
// kOverwrite).
void mean_rows_backward(float* dx, const float* dout, const int* lengths, int B, int T, int C,
                        GradStore store = GradStore::kAccumulate);

}  // namespace potop
