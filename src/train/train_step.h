// One optimizer step, the only place potop writes the sequence out: the trainer, the benchmark,
// the tests (and, later, multi-process training) all call it, so none can drift from the others.
//
//   zero the gradients
//   for each of the step's micro-batches: forward (training, its own dropout seed), backward of
//     1/M of its loss (the step's loss is the mean over the M micro-batches)
//   sum the replicas' gradients
//   sum the gradients (and losses) of the ranks, with several processes (dist/communicator.h);
//     the gradients' sums start during the last backward, bucket by bucket (bucket_floats)
//   clip the global gradient norm (or just measure it)
//   AdamW at the step's learning rate — only when the loss and the norm are finite: otherwise
//     nothing is updated and the caller decides (stop, or skip the step)
#pragma once
#include <cstdint>
#include <functional>

#include "dist/communicator.h"
#include "nn/model.h"
#include "train/adamw.h"
#include "train/batch_parallel.h"

namespace potop {

struct StepSettings {
  float lr = 1e-3f;
  float grad_clip = 1.0f;  // 0: measure the norm, do not clip
  int micro_batches = 1;  // of this process
  // Dropout masks of micro-batch k of step s come from hash64(dropout_seed, s·M + k), so a
  // resumed run draws the same masks as an uninterrupted one.
  uint64_t dropout_seed = 0;
  long step = 0;
  // The processes of a multi-process run (null: this one alone). With P ranks the step has
  // M·P micro-batches, rank r running micro-batches k = m·P + r (m < M); each is weighted 1/(M·P)
  // and the gradients and losses are summed over the ranks before clipping, so every rank takes
  // the same AdamW step as one process running all M·P micro-batches (--grad-accum M·P).
  Communicator* ranks = nullptr;
  // With ranks: the gradients are sent in buckets of at least this many floats as soon as the
  // backward pass has finished them (ParameterSet::grads_final_from), while it goes on with the
  // earlier layers; 0: one exchange after the backward pass. The sums are the same to the bit
  // either way. Overlap needs the last micro-batch's backward on one replica (one thread per
  // rank, or --parallel kernel); with several replicas their gradients are final only after
  // reduce_grads, so the exchange waits for it.
  size_t bucket_floats = 0;
};

struct StepResult {
  float lr = 0;          // the learning rate of the step
  float loss = 0;        // mean over the micro-batches
  double grad_norm = 0;  // before clipping
  bool applied = false;  // false: the loss or the norm was not finite, and nothing was updated
};

// next_batch() gives the step's micro-batches one after another (the trainer draws them from its
// sampler as it goes, so a step never holds more than one).
StepResult train_step(BatchParallel& model, AdamW& optimizer, const StepSettings& settings,
                      const std::function<Batch()>& next_batch);

}  // namespace potop
