// AdamW and gradient clipping, following torch.optim.AdamW's single-tensor path (the one
// PyTorch uses on CPU) operation by operation.
#include "kernels/optimizer.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "core/decimal.h"
#include "core/error.h"
#include "core/profile.h"
#include "core/threads.h"

namespace potop {

void adamw_update(float* params, const float* grads, float* m, float* v, size_t n, const AdamWHyper& hyper,
                  float weight_decay, long t) {
  // params (n), grads (n), m (n), v (n); t >= 1
  const profile::Scope scope("adamw_update");
  POTOP_CHECK(t >= 1, "AdamW step counts from 1");
  // The hyperparameters are stored as float, but PyTorch computes its scalars (1 - lr·wd,
  // 1 - β^t, lr / (1 - β1^t)) from Python doubles: as_written recovers the decimal the user
  // wrote (0.9f -> 0.9), so those scalars come out as PyTorch's do.
  const double lr = as_written(hyper.lr), beta1 = as_written(hyper.beta1), beta2 = as_written(hyper.beta2);
  const double wd = as_written(weight_decay);
  // Scalars as torch computes them in Python (double), then rounded to the tensor's float.
  const float decay = static_cast<float>(1.0 - lr * wd);               // param.mul_(1 - lr * wd)
  const float w1 = static_cast<float>(1.0 - beta1);                    // exp_avg.lerp_(grad, 1 - β1)
  const float b2 = static_cast<float>(beta2);                          // exp_avg_sq.mul_(β2)
  const float w2 = static_cast<float>(1.0 - beta2);                    //   .addcmul_(grad, grad, 1 - β2)
  const double bias_correction1 = 1.0 - std::pow(beta1, static_cast<double>(t));
  const double bias_correction2 = 1.0 - std::pow(beta2, static_cast<double>(t));
  const float neg_step = static_cast<float>(-(lr / bias_correction1));  // addcdiv_ value = -step_size
  const float bc2_sqrt = static_cast<float>(std::sqrt(bias_correction2));
  const float eps = static_cast<float>(as_written(hyper.eps));
  const bool small_w1 = std::fabs(w1) < 0.5f;  // torch's lerp switches formula at weight 0.5
#pragma omp parallel for schedule(static) if (n >= kParallelMinFloats)
  for (size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    const float p = wd != 0.0 ? params[i] * decay : params[i];
    const float mi = small_w1 ? m[i] + w1 * (g - m[i]) : g - (g - m[i]) * (1.0f - w1);
    const float vi = v[i] * b2 + w2 * g * g;
    const float denom = std::sqrt(vi) / bc2_sqrt + eps;
    params[i] = p + neg_step * mi / denom;
    m[i] = mi;
    v[i] = vi;
  }
}

double global_norm(const float* grads, size_t n) {
  // grads (n). Each thread sums its static share in double; the partials are added in thread
  // order, so the result depends only on n and the thread count.
  const profile::Scope scope("global_norm");
  constexpr int kMaxThreads = 256;
  struct alignas(64) Partial {
    double sum;
  };
  Partial partials[kMaxThreads];
  int used = 1;
  const int want = n >= kParallelMinFloats ? std::min(omp_get_max_threads(), kMaxThreads) : 1;
#pragma omp parallel num_threads(want)
  {
    const size_t nthreads = static_cast<size_t>(omp_get_num_threads());
    const size_t tid = static_cast<size_t>(omp_get_thread_num());
    const size_t per = (n + nthreads - 1) / nthreads;
    const size_t i0 = std::min(n, tid * per), i1 = std::min(n, i0 + per);
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (size_t i = i0; i < i1; ++i) s += static_cast<double>(grads[i]) * grads[i];
    partials[tid].sum = s;
    if (tid == 0) used = static_cast<int>(nthreads);
  }
  double total = 0.0;
  for (int k = 0; k < used; ++k) total += partials[k].sum;
  return std::sqrt(total);
}

double clip_grad_norm(float* grads, size_t n, double max_norm) {
  // grads (n), scaled in place when clipped
  const profile::Scope scope("clip_grad_norm");
  const double norm = global_norm(grads, n);
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1.0) {
    const float c = static_cast<float>(coef);
#pragma omp parallel for schedule(static) if (n >= kParallelMinFloats)
    for (size_t i = 0; i < n; ++i) grads[i] *= c;
  }
  return norm;
}

}  // namespace potop
