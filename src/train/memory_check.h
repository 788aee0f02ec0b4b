// Refuses, before anything is allocated, a training run that cannot fit: one tensor over 2^31
// values (the kernels index rows with int), or a total that exceeds the machine's physical
// memory. Without it such a run would die later: bad_alloc at best, the kernel's OOM killer at
// worst. The plan it checks comes from the model's own layouts (Model::memory_plan), so the check
// counts exactly what the model allocates.
#pragma once
#include <cstdio>

#include "nn/model.h"

namespace potop {

// Throws potop::Error naming the flags to reduce when the run cannot fit. replicas > 1 adds the
// hint that fewer threads keep fewer gradient copies.
void check_training_fits(const MemoryPlan& plan, int replicas = 1);

// The plan, line by line and its total (--verbose).
void print_memory_plan(std::FILE* log, const MemoryPlan& plan);

}  // namespace potop
