#include "train/evaluate.h"

#include <limits>

#include "core/profile.h"

namespace potop {

LossTotal evaluate_loss(BatchParallel& model, const std::function<bool(Batch&)>& next) {
  const profile::Pause pause;  // not part of the training step's profile
  LossTotal total;
  Batch batch;
  while (next(batch)) {
    const float mean = model.forward(batch, {/*training=*/false, 0});
    total.sum += static_cast<double>(mean) * model.counted_targets();
    total.targets += model.counted_targets();
  }
  return total;
}

std::optional<float> estimate_loss(BatchParallel& model, TokenView tokens, int B, int T, int iters, uint64_t seed,
                                   std::vector<int>& x, std::vector<int>& y, const std::function<bool()>& stop) {
  BatchSampler sampler(tokens, B, T, seed);
  int drawn = 0;
  bool stopped = false;
  const LossTotal total = evaluate_loss(model, [&](Batch& batch) {
    if (drawn++ == iters) return false;
    if (stop()) return !(stopped = true);
    sampler.next(x.data(), y.data());
    batch = Batch{{B, T}, x.data(), y.data()};
    return true;
  });
  if (stopped) return std::nullopt;
  return static_cast<float>(total.mean());
}

std::optional<Evaluation> evaluate_train_val(BatchParallel& model, TokenView train, TokenView val, int B, int T,
                                             int iters, uint64_t seed, std::vector<int>& x, std::vector<int>& y,
                                             const std::function<bool()>& stop) {
  const std::optional<float> train_loss = estimate_loss(model, train, B, T, iters, seed, x, y, stop);
  if (!train_loss) return std::nullopt;
  if (val.empty()) return Evaluation{*train_loss, std::numeric_limits<float>::quiet_NaN()};
  const std::optional<float> val_loss = estimate_loss(model, val, B, T, iters, seed, x, y, stop);
  if (!val_loss) return std::nullopt;
  return Evaluation{*train_loss, *val_loss};
}

}  // namespace potop
