// AdamW (decoupled weight decay, Loshchilov & Hutter) and global-norm gradient clipping.
#pragma once
#include <cstddef>

namespace potop {

struct AdamWHyper {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.99f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
};

// One AdamW step on a flat tensor of n values, t = 1, 2, … (bias correction), as torch.optim.AdamW:
//   p -= lr * wd * p;  m = β1 m + (1-β1) g;  v = β2 v + (1-β2) g²;
//   p -= lr * (m / (1-β1^t)) / (√(v / (1-β2^t)) + eps)
// weight_decay is passed separately so callers can exempt biases and LayerNorm gains.
void adamw_update(float* params, const float* grads, float* m, float* v, size_t n, const AdamWHyper& hyper,
                  float weight_decay, long t);

// √(Σ g²), accumulated in double in a fixed order: the same for a given thread count.
double global_norm(const float* grads, size_t n);
// If the global norm exceeds max_norm, scales grads by max_norm / norm (as
// torch.nn.utils.clip_grad_norm_, which uses max_norm / (norm + 1e-6)). Returns the norm before clipping.
double clip_grad_norm(float* grads, size_t n, double max_norm);

}  // namespace potop
