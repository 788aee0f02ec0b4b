#include "train/memory_check.h"

#include <cstdio>
#include <string>

#include "core/error.h"
#include "core/memory.h"

namespace potop {

void check_training_fits(const MemoryPlan& plan, int replicas) {
  constexpr double kLimit = 2147483647.0;  // values in one tensor
  if (plan.largest_floats > kLimit) {
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", plan.largest_floats);
    throw Error("the " + std::string(plan.largest_is_activation ? "activation '" : "parameter '") + plan.largest_tensor +
                "' would hold " + count + " values, over potop's limit of 2^31 per tensor; use a smaller " +
                (plan.largest_is_activation ? "--batch-size or --block-size" : "--n-embd or vocabulary"));
  }
  const double need = plan.total(), have = physical_memory_bytes();
  if (have > 0 && need > have)
    throw Error("this model needs about " + format_gib(need) + " of memory to train but the machine has " + format_gib(have) +
                "; use a smaller --batch-size, --block-size, --n-embd or --n-layer" +
                (replicas > 1 ? ", or fewer --threads (each keeps its own gradients)" : ""));
}

void print_memory_plan(std::FILE* log, const MemoryPlan& plan) {
  std::fprintf(log, "memory plan:\n");
  for (const MemoryPlan::Line& line : plan.lines)
    std::fprintf(log, "  %-36s %12s\n", line.what.c_str(), format_bytes(static_cast<size_t>(line.bytes)).c_str());
  std::fprintf(log, "  %-36s %12s\n", "total", format_bytes(static_cast<size_t>(plan.total())).c_str());
}

}  // namespace potop
