// Per-thread scratch buffers for kernels: they only grow, so a training loop that calls a kernel
// with the same sizes every step allocates nothing after the first. Each call site names its
// own Tag type, so two kernels never hand out the same buffer.
#pragma once
#include <cstddef>
#include <vector>

namespace potop {

// At least n floats, the calling thread's own, in buffer `slot` (< kSlots) of Tag's set.
// Contents are whatever the last user left.
template <class Tag, int kSlots = 1>
float* thread_scratch(int slot, size_t n) {
  thread_local std::vector<float> buffers[kSlots];
  if (buffers[slot].size() < n) buffers[slot].resize(n);
  return buffers[slot].data();
}

}  // namespace potop
