#include "train/train_step.h"

#include <cmath>
#include <optional>

#include "core/profile.h"
#include "core/rng.h"
#include "kernels/optimizer.h"

namespace potop {

namespace {

// Starts the exchange of the gradients the backward pass has finished, bucket by bucket from
// the end of the gradient arena down (backward finishes the last-declared layers first), and
// lets MPI move the started buckets on between layers.
class BucketedExchange {
 public:
  BucketedExchange(Communicator& ranks, ParameterSet& params, size_t bucket_floats)
      : ranks_(ranks), params_(params), bucket_(bucket_floats), grads_(params.grads().data()),
        unsent_end_(params.grads().floats()) {
    params_.set_grads_final_hook([this](ParamId first) { final_from(first); });
  }
  ~BucketedExchange() { params_.set_grads_final_hook(nullptr); }
  BucketedExchange(const BucketedExchange&) = delete;
  BucketedExchange& operator=(const BucketedExchange&) = delete;

  // After the backward pass: the rest (the embeddings, ...), then wait for every bucket.
  void finish() {
    params_.set_grads_final_hook(nullptr);
    if (unsent_end_ > 0) ranks_.start_sum_floats(grads_, unsent_end_);
    unsent_end_ = 0;
    ranks_.finish_sums();
  }

 private:
  void final_from(ParamId first) {
    const size_t from = params_.spec(first).offset;  // [from, end) is final
    if (from < unsent_end_ && unsent_end_ - from >= bucket_) {
      ranks_.start_sum_floats(grads_ + from, unsent_end_ - from);
      unsent_end_ = from;
    }
    ranks_.progress();
  }

  Communicator& ranks_;
  ParameterSet& params_;
  size_t bucket_;
  float* grads_;
  size_t unsent_end_;  // gradients below this are not sent yet
};

}  // namespace

StepResult train_step(BatchParallel& model, AdamW& optimizer, const StepSettings& s,
                      const std::function<Batch()>& next_batch) {
  const profile::Scope step_scope("step");  // --profile: the table's 100%
  model.zero_grad();
  const int P = s.ranks ? s.ranks->size() : 1, rank = s.ranks ? s.ranks->rank() : 0;
  const int total = s.micro_batches * P;  // micro-batches of the step over all ranks
  if (P > 1) s.ranks->begin_step(s.step + 1);  // (for a timeout's message: steps count from 1)
  double loss = 0;
  std::optional<BucketedExchange> overlapped;
  for (int micro = 0; micro < s.micro_batches; ++micro) {
    const Batch batch = next_batch();
    const uint64_t k = uint64_t(micro) * P + rank;
    const uint64_t seed = hash64(s.dropout_seed, uint64_t(s.step) * total + k);
    loss += model.forward(batch, {/*training=*/true, seed});
    // The last micro-batch's backward finishes the gradients; on one replica they are the
    // model's own from the start, and the exchange can begin layer by layer.
    if (P > 1 && s.bucket_floats > 0 && micro == s.micro_batches - 1 && model.shards(batch.B) == 1)
      overlapped.emplace(*s.ranks, model.model().parameters(), s.bucket_floats);
    model.backward(1.0f / total);
  }
  model.reduce_grads();
  Arena& grads = model.model().parameters().grads();
  if (P > 1) {  // the all-reduce: every rank then holds the gradients of the whole step
    if (overlapped) overlapped->finish();
    else s.ranks->sum_floats(grads.data(), grads.floats());
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
