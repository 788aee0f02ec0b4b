#include "train/memory_check.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "core/error.h"

namespace potop {

namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

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
    throw Error("this model needs about " + gib(need) + " of memory to train but the machine has " + gib(have) +
                "; use a smaller --batch-size, --block-size, --n-embd or --n-layer" +
                (replicas > 1 ? ", or fewer --threads (each keeps its own gradients)" : ""));
}

}  // namespace potop
