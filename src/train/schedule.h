// Learning rate by step: linear warm-up, then cosine decay to min_lr (nanoGPT's get_lr).
#pragma once
#include <algorithm>
#include <cmath>

namespace potop {

struct LRSchedule {
  float lr, min_lr;
  int warmup, decay_steps;

  float at(int step) const {
    if (step < warmup) return lr * static_cast<float>(step + 1) / static_cast<float>(warmup + 1);
    if (step >= decay_steps) return min_lr;
    const double ratio = static_cast<double>(step - warmup) / std::max(1, decay_steps - warmup);
    const double coeff = 0.5 * (1.0 + std::cos(3.141592653589793 * ratio));
    return static_cast<float>(min_lr + coeff * (lr - min_lr));
  }
};

}  // namespace potop
