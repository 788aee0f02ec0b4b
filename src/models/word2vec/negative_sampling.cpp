#include "models/word2vec/negative_sampling.h"

#include <cmath>

namespace potop {
namespace {

float dot(const float* a, const float* b, int n) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// -log σ(x) for the label: label 1 gives log(1 + e^-x), label 0 gives log(1 + e^x), computed
// without overflow.
double log_loss(float score, bool positive) {
  const double z = positive ? -static_cast<double>(score) : static_cast<double>(score);
  return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
}

}  // namespace

float sigmoid(float x) {
  if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
}

double negative_sampling_forward_backward(float* dh, float* doutputs, const float* h, const float* outputs,
                                          int n_targets, int D) {
  double loss = 0.0;
  for (int j = 0; j < n_targets; ++j) {
    const float* u = outputs + static_cast<long>(j) * D;
    float* du = doutputs + static_cast<long>(j) * D;
    const float score = dot(u, h, D);                  // s_j = u_j·h
    const bool positive = j == 0;
    loss += log_loss(score, positive);                 // L += -log σ(±s_j)
    const float g = sigmoid(score) - (positive ? 1.0f : 0.0f);  // dL/ds_j = σ(s_j) - label_j
    for (int i = 0; i < D; ++i) {
      dh[i] += g * u[i];                               // dL/dh   += dL/ds_j · u_j
      du[i] += g * h[i];                               // dL/du_j += dL/ds_j · h
    }
  }
  return loss;
}

void negative_sampling_sgd(float* dh_acc, float* const* output_rows, const float* h, int n_targets, int D,
                           float lr) {
  for (int j = 0; j < n_targets; ++j) {
    float* u = output_rows[j];
    const float score = dot(u, h, D);
    const bool positive = j == 0;
    const float g = lr * ((positive ? 1.0f : 0.0f) - sigmoid(score));  // -lr · dL/ds_j
#pragma omp simd
    for (int i = 0; i < D; ++i) dh_acc[i] += g * u[i];  // with u_j before its update
#pragma omp simd
    for (int i = 0; i < D; ++i) u[i] += g * h[i];
  }
}

}  // namespace potop
