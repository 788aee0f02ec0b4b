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
  const int P = s.ranks ? s.ranks->size() : 1, rank = s.ranks ? s.ranks->rank() : 0;
  const int total = s.micro_batches * P;  // micro-batches of the step over all ranks
  double loss = 0;
  for (int micro = 0; micro < s.micro_batches; ++micro) {
    const Batch batch = next_batch();
    const uint64_t k = uint64_t(micro) * P + rank;
    const uint64_t seed = hash64(s.dropout_seed, uint64_t(s.step) * total + k);
    loss += model.forward(batch, {/*training=*/true, seed});
    model.backward(1.0f / total);
  }
  model.reduce_grads();
  Arena& grads = model.model().parameters().grads();
  if (P > 1) {  // the all-reduce: every rank then holds the gradients of the whole step
    s.ranks->sum_floats(grads.data(), grads.floats());
    loss = s.ranks->sum(loss);
  }
  StepResult r;
  r.lr = s.lr;
  r.loss = static_cast<float>(loss / total);
  r.grad_norm = s.grad_clip > 0 ? clip_grad_norm(grads.data(), grads.floats(), s.grad_clip)
                                : global_norm(grads.data(), grads.floats());
  r.applied = std::isfinite(r.loss) && std::isfinite(r.grad_norm);
  if (r.applied) optimizer.step(model.model().parameters(), s.lr);
  return r;
}

}  // namespace potop
