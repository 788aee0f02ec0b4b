#include "train/train_step.h"

#include <cmath>

#include "core/profile.h"
#include "core/rng.h"
#include "kernels/optimizer.h"

namespace potop {

StepResult train_step(BatchParallel& model, AdamW& optimizer, const StepSettings& s,
                      const std::function<Batch()>& next_batch) {
  const profile::Scope step_scope("step");  // --profile: the table's 100%
  model.zero_grad();
  double loss = 0;
  for (int micro = 0; micro < s.micro_batches; ++micro) {
    const Batch batch = next_batch();
    const uint64_t seed = hash64(s.dropout_seed, uint64_t(s.step) * s.micro_batches + micro);
    loss += model.forward(batch, {/*training=*/true, seed});
    model.backward(1.0f / s.micro_batches);
  }
  model.reduce_grads();
  StepResult r;
  r.lr = s.lr;
  r.loss = static_cast<float>(loss / s.micro_batches);
  Arena& grads = model.model().parameters().grads();
  r.grad_norm = s.grad_clip > 0 ? clip_grad_norm(grads.data(), grads.floats(), s.grad_clip)
                                : global_norm(grads.data(), grads.floats());
  r.applied = std::isfinite(r.loss) && std::isfinite(r.grad_norm);
  if (r.applied) optimizer.step(model.model().parameters(), s.lr);
  return r;
}

}  // namespace potop
