#include "model/batch_parallel.h"

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

BatchParallel::BatchParallel(GPT& model, int threads) : model_(model) {
  POTOP_CHECK(threads >= 1, "BatchParallel needs at least one thread");
  for (int s = 1; s < threads; ++s) replicas_.push_back(GPT::replica_of(model));
}

int BatchParallel::shards(int B) const { return std::clamp(B, 1, max_replicas()); }

template <class F>
void BatchParallel::for_each_shard(int B, F f) {
  const int n = shards(B);
  auto first_row = [&](int s) { return static_cast<int>(int64_t{s} * B / n); };
  auto run = [&](int s) { f(s, first_row(s), first_row(s + 1) - first_row(s)); };
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

void BatchParallel::reserve(int B, int T) {
  for_each_shard(B, [&](int s, int, int rows) { replica(s).reserve(rows, T); });
}

float BatchParallel::forward(const int* tokens, const int* targets, int B, int T, bool training, uint64_t dropout_seed) {
  shards_ = shards(B);
  std::vector<float> loss(shards_);
  std::vector<int> counted(shards_);
  for_each_shard(B, [&](int s, int r0, int rows) {
    const size_t offset = static_cast<size_t>(r0) * T;
    loss[s] = replica(s).forward(tokens + offset, targets ? targets + offset : nullptr, rows, T, training,
                                 shard_dropout_seed(dropout_seed, s));
    counted[s] = replica(s).counted_targets();
  });
  // mean over the whole batch = Σ_s mean_s · counted_s / Σ_s counted_s
  int total = 0;
  for (int c : counted) total += c;
  shard_weight_.assign(shards_, 0.0);
  double sum = 0;
  for (int s = 0; s < shards_; ++s) {
    if (total) shard_weight_[s] = static_cast<double>(counted[s]) / total;
    sum += shard_weight_[s] * loss[s];
  }
  return static_cast<float>(sum);
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
  for_each_shard(max_replicas(), [&](int s, int, int) { replica(s).zero_grad(); });
  replica_grads_dirty_ = false;
}

void BatchParallel::reduce_grads() {
  if (!replica_grads_dirty_) return;
  const profile::Scope scope("reduce_grads");
  float* g = model_.grads().data();
  const size_t n = model_.grads().floats();
  std::vector<const float*> parts;
  for (GPT& r : replicas_) parts.push_back(r.grads().data());
  // Element i is summed in replica order whatever thread owns it: the same for every schedule.
#pragma omp parallel num_threads(max_replicas())
  for (const float* part : parts) {
#pragma omp for simd schedule(static)
    for (size_t i = 0; i < n; ++i) g[i] += part[i];
  }
  replica_grads_dirty_ = false;
}

std::vector<std::pair<std::string, size_t>> BatchParallel::memory_plan() const {
  std::vector<std::pair<std::string, size_t>> plan = model_.memory_plan();
  for (const GPT& r : replicas_) {
    for (const auto& entry : r.memory_plan()) {
      if (entry.first == "parameters") continue;  // shared
      auto it = std::find_if(plan.begin(), plan.end(), [&](const auto& e) { return e.first == entry.first; });
      if (it == plan.end()) plan.push_back(entry);
      else it->second += entry.second;
    }
  }
  return plan;
}

}  // namespace potop
