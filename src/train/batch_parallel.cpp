#include "train/batch_parallel.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <exception>

#include "core/error.h"
#include "core/profile.h"
#include "core/rng.h"

namespace potop {

uint64_t shard_dropout_seed(uint64_t seed, int shard) {
  return shard == 0 ? seed : hash64(seed, 0x5348415244ULL + static_cast<uint64_t>(shard));  // "SHARD"
}

BatchParallel::BatchParallel(Model& model, int threads) : model_(model) {
  POTOP_CHECK(threads >= 1, "BatchParallel needs at least one thread");
  for (int s = 1; s < threads; ++s) replicas_.push_back(model.replica());
}

int BatchParallel::shards(int B) const { return std::clamp(B, 1, max_replicas()); }

namespace {

int first_row(int shard, int B, int shards) { return static_cast<int>(int64_t{shard} * B / shards); }

}  // namespace

template <class F>
void BatchParallel::for_each_shard(int B, F f) {
  const int n = shards(B);
  auto run = [&](int s) { f(s, first_row(s, B, n), first_row(s + 1, B, n) - first_row(s, B, n)); };
  if (n == 1) {
    run(0);  // the model alone, its kernels threaded
    return;
  }
  // One thread per shard. Kernels called inside see an active parallel region and run on
  // their own thread (nested parallelism is off: core/threads.cpp). An exception must not
  // leave the region: each is kept and the first rethrown after it.
  std::vector<std::exception_ptr> errors(n);
#pragma omp parallel num_threads(n)
  for (int s = omp_get_thread_num(); s < n; s += omp_get_num_threads()) {
    try {
      run(s);
    } catch (...) {
      errors[s] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

void BatchParallel::reserve(const BatchShape& shape) {
  for_each_shard(shape.B, [&](int s, int, int rows) { replica(s).reserve({rows, shape.T, shape.S}); });
}

float BatchParallel::forward(const Batch& batch, const Pass& pass) {
  shards_ = shards(batch.B);
  last_B_ = batch.B;
  std::vector<float> loss(shards_);
  std::vector<int> counted(shards_);
  for_each_shard(batch.B, [&](int s, int r0, int rows) {
    loss[s] = replica(s).forward(batch.rows(r0, rows), {pass.training, shard_dropout_seed(pass.dropout_seed, s)});
    counted[s] = replica(s).counted_targets();
  });
  // mean over the whole batch = Σ_s mean_s · counted_s / Σ_s counted_s
  counted_ = 0;
  for (int c : counted) counted_ += c;
  shard_weight_.assign(shards_, 0.0);
  double sum = 0;
  for (int s = 0; s < shards_; ++s) {
    if (counted_) shard_weight_[s] = static_cast<double>(counted[s]) / counted_;
    sum += shard_weight_[s] * loss[s];
  }
  return static_cast<float>(sum);
}

void BatchParallel::for_each_last_shard(const std::function<void(Model&, int, int)>& f) {
  for (int s = 0; s < shards_; ++s) {
    const int r0 = first_row(s, last_B_, shards_);
    f(replica(s), r0, first_row(s + 1, last_B_, shards_) - r0);
  }
}

void BatchParallel::backward(float loss_scale) {
  if (shards_ == 1) {
    model_.backward(loss_scale);
    return;
  }
  // Each shard's loss enters the batch mean with its weight, and so does its gradient.
  for_each_shard(shards_, [&](int s, int, int) {
    replica(s).backward(static_cast<float>(loss_scale * shard_weight_[s]));
  });
  replica_grads_dirty_ = true;
}

void BatchParallel::zero_grad() {
  // Each thread zeroes (and, the first time, allocates) its own replica's gradients, so they
  // are first touched by the core that uses them.
  for_each_shard(max_replicas(), [&](int s, int, int) { replica(s).parameters().zero_grad(); });
  replica_grads_dirty_ = false;
}

void BatchParallel::reduce_grads() {
  if (!replica_grads_dirty_) return;
  const profile::Scope scope("reduce_grads");
  float* g = model_.parameters().grads().data();
  const size_t n = model_.parameters().grads().floats();
  std::vector<const float*> parts;
  for (auto& r : replicas_) parts.push_back(r->parameters().grads().data());
  // Element i is summed in replica order whatever thread owns it: the same for every schedule.
#pragma omp parallel num_threads(max_replicas())
  for (const float* part : parts) {
#pragma omp for simd schedule(static)
    for (size_t i = 0; i < n; ++i) g[i] += part[i];
  }
  replica_grads_dirty_ = false;
}

MemoryPlan BatchParallel::memory_plan(const BatchShape& shape) const {
  return plan([&](const BatchShape& s) { return model_.memory_plan(s); }, shape, max_replicas());
}

MemoryPlan BatchParallel::plan(const std::function<MemoryPlan(const BatchShape&)>& model_plan, const BatchShape& shape,
                               int threads) {
  const int n = std::clamp(shape.B, 1, threads);
  MemoryPlan total;
  for (int s = 0; s < threads; ++s) {
    // A replica beyond the batch's rows holds gradients but never runs.
    const int rows = s < n ? first_row(s + 1, shape.B, n) - first_row(s, shape.B, n) : 0;
    const MemoryPlan one = model_plan({rows, shape.T, shape.S});
    for (const MemoryPlan::Line& line : one.lines) {
      if (s > 0 && line.shared) continue;
      auto it = std::find_if(total.lines.begin(), total.lines.end(), [&](const auto& l) { return l.what == line.what; });
      if (it == total.lines.end()) total.lines.push_back(line);
      else it->bytes += line.bytes;
    }
    if (one.largest_floats > total.largest_floats)
      total.largest_tensor = one.largest_tensor, total.largest_floats = one.largest_floats,
      total.largest_is_activation = one.largest_is_activation;
  }
  return total;
}

}  // namespace potop
