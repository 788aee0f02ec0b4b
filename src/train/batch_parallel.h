// Training on several threads by splitting the batch, not the kernels: with S threads the
// batch's rows are cut into S contiguous shards and each thread runs the whole forward and
// backward pass of its own replica (model.h: same parameters, own activations and gradients) on
// one shard, single-threaded. The replicas' gradients are then summed into the model's. Every
// GEMM and kernel runs on one core from start to end, so there is no fork/join per kernel and no
// GEMM split thin across threads; on small models this is most of the difference between one
// and two threads. It works for any model that keeps the contract of model/model.h.
//
// The loss and gradients are those of the whole batch: each shard's mean loss is weighted by its
// share of the counted targets. They differ from a one-replica pass only in float rounding
// (sums in another order). Results do not depend on timing: shards are fixed by (B, S) and
// gradients are summed in replica order. Dropout masks are drawn per shard.
//
// With S = 1, or a batch of one row, it is the model itself with kernel-level threading.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "nn/model.h"

namespace potop {

class BatchParallel {
 public:
  // Up to `threads` replicas, the first being `model` itself; `model` must outlive this.
  BatchParallel(Model& model, int threads);

  Model& model() { return model_; }
  int max_replicas() const { return 1 + static_cast<int>(replicas_.size()); }
  // Replicas a batch of B rows is split over: min(threads, B).
  int shards(int B) const;

  // Sizes every replica's activations for batches of this shape.
  void reserve(const BatchShape& shape);
  // As Model::forward: the mean loss over the whole batch's counted targets.
  float forward(const Batch& batch, const Pass& pass);
  int counted_targets() const { return counted_; }
  // Calls f(replica, first_row, rows) for each shard of the last forward, in shard order: where
  // a caller reads what a model keeps of its own rows (a head's logits, for an accuracy).
  void for_each_last_shard(const std::function<void(Model& replica, int first_row, int rows)>& f);
  // As Model::backward: gradients of loss_scale · (the last forward's mean loss). The model's
  // own shard goes into its gradients, the others into their replicas' until reduce_grads().
  void backward(float loss_scale = 1.0f);
  // Zeroes the model's and every replica's gradients.
  void zero_grad();
  // Adds the replicas' gradients into the model's, in replica order. Call once after the
  // backward passes of a step, before reading the gradients.
  void reduce_grads();

  // The model's plan for the whole set: parameters once; gradients, activations and scratch
  // of every replica, each sized for its shard of a batch of this shape.
  MemoryPlan memory_plan(const BatchShape& shape) const;
  // The same before any model exists, from a model type's plan function (the memory check).
  static MemoryPlan plan(const std::function<MemoryPlan(const BatchShape&)>& model_plan, const BatchShape& shape,
                         int threads);

 private:
  Model& replica(int s) { return s == 0 ? model_ : *replicas_[s - 1]; }
  // Runs f(s, first_row, rows) for each shard s of a B-row batch, shard s on thread s.
  template <class F>
  void for_each_shard(int B, F f);

  Model& model_;
  std::vector<std::unique_ptr<Model>> replicas_;
  std::vector<double> shard_weight_;  // each shard's share of the counted targets, last forward
  int shards_ = 1;                    // of the last forward
  int counted_ = 0;
  int last_B_ = 0;                    // rows of the last forward
  bool replica_grads_dirty_ = false;  // replicas hold gradients not yet reduced
};

// Dropout seed of shard s: shard 0 keeps the step's own seed, so one replica is one model.
uint64_t shard_dropout_seed(uint64_t seed, int shard);

}  // namespace potop
