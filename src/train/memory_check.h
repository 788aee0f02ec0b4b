// Refuses, before anything is allocated, a training run that cannot fit: one activation tensor
// over 2^31 elements (the kernels index rows with int), or a total that exceeds the machine's
// physical memory. Without it such a run would die later: bad_alloc at best, the kernel's OOM
// killer at worst.
#pragma once
#include <cstddef>

#include "model/config.h"

namespace potop {

// Bytes for parameters, gradients, both AdamW moments, activations and backward scratch for
// micro-batches (B, T), following GPT::reserve, with one gradient copy per batch-parallel
// replica (model/batch_parallel.h). Computed in double: huge sizes never overflow.
double estimated_training_bytes(const GPTConfig& config, int B, int T, int replicas = 1);

// Throws potop::Error naming the flags to reduce when the run cannot fit (see above).
void check_training_fits(const GPTConfig& config, int B, int T, int replicas = 1);

// Total physical memory in bytes (0 when unknown).
double physical_memory_bytes();

}  // namespace potop
