#include "train/evaluate.h"

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

}  // namespace potop
