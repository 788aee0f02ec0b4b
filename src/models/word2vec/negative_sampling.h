// word2vec's negative-sampling objective for one example (Mikolov et al. 2013): an input vector
// h (a word's vector in skip-gram, the mean of the context vectors in CBOW) scores K+1 output
// vectors u_0..u_K, of which u_0 is the word to predict (label 1) and u_1..u_K are negative
// samples (label 0):
//
//   L = -log σ(u_0·h) - Σ_{k=1..K} log σ(-u_k·h)
//
// Two entry points, one objective:
//  - negative_sampling_forward_backward: the loss and its exact gradients (for tests, and for
//    anyone who wants the loss);
//  - negative_sampling_sgd: the update word2vec.c and gensim make, in place and in their order:
//    for each target j, g = lr·(label_j - σ(u_j·h)); dh_acc += g·u_j (with u_j before its
//    update); u_j += g·h. When the K+1 rows are distinct this is exactly u_j -= lr·dL/du_j and
//    dh_acc -= lr·dL/dh; a row repeated among the negatives sees its earlier update, as in
//    word2vec.c. The caller adds dh_acc to the input vector(s) after the call.
#pragma once

namespace potop {

// Returns L. dh (D) += dL/dh; doutputs (K+1, D) += dL/du_j, row j for outputs row j.
// h (D); outputs (K+1, D): row 0 the positive, rows 1..K the negatives.
double negative_sampling_forward_backward(float* dh, float* doutputs, const float* h, const float* outputs,
                                          int n_targets, int D);

// In-place SGD step as described above. output_rows[j] points at u_j (D floats, updated);
// h (D) is read only; dh_acc (D) += -lr · dL/dh. No loss: the log would cost as much as the
// dot products, and word2vec does not report one.
void negative_sampling_sgd(float* dh_acc, float* const* output_rows, const float* h, int n_targets, int D,
                             float lr);

// σ(x) = 1 / (1 + e^-x), computed without overflow for any finite x.
float sigmoid(float x);

}  // namespace potop
