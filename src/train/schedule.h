// Learning rate by step, the one schedule object every trainer uses:
//   cosine (nanoGPT's get_lr): linear warm-up to lr, cosine decay to min_lr at decay_steps, then
//          min_lr;
//   noam   ("Attention Is All You Need", 5.3): lr · d_model^-0.5 · min(s^-0.5, s · warmup^-1.5),
//          s = step + 1: lr is a factor, and the rate peaks at the end of the warm-up;
//   linear (Hugging Face's get_linear_schedule_with_warmup, the Trainer's default): linear
//          warm-up to lr, then a straight line down to min_lr at decay_steps, then min_lr.
#pragma once
#include <algorithm>
#include <cmath>

namespace potop {

enum class LrShape { kCosine, kNoam, kLinear };

struct LRSchedule {
  float lr, min_lr;
  int warmup, decay_steps;
  LrShape shape = LrShape::kCosine;
  int d_model = 1;  // noam's width

  float at(int step) const {
    if (shape == LrShape::kNoam) {
      const double s = step + 1.0, w = warmup;
      return static_cast<float>(lr / std::sqrt(double(d_model)) * std::min(1.0 / std::sqrt(s), s * std::pow(w, -1.5)));
    }
    if (step < warmup) return lr * static_cast<float>(step + 1) / static_cast<float>(warmup + 1);
    if (step >= decay_steps) return min_lr;
    const double ratio = static_cast<double>(step - warmup) / std::max(1, decay_steps - warmup);
    const double coeff = shape == LrShape::kLinear ? 1.0 - ratio : 0.5 * (1.0 + std::cos(3.141592653589793 * ratio));
    return static_cast<float>(min_lr + coeff * (lr - min_lr));
  }
};

}  // namespace potop
