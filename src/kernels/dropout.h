// Inverted dropout with a counter-based mask: element i is kept iff
// counter_uniform(seed, i) >= p, and kept elements are scaled by 1 / (1 - p). The mask is never
// stored: the backward pass regenerates it from (seed, i), and it is the same whatever the
// thread count. The caller derives a fresh seed per call site and step.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/grad_store.h"

namespace potop {

// out = inp * keep(i) / (1 - p); 0 <= p < 1; out may alias inp. p == 0 copies.
void dropout_forward(float* out, const float* inp, float p, uint64_t seed, size_t n);
// dinp (n) += dout * keep(i) / (1 - p)   (= with GradStore::kOverwrite)
void dropout_backward(float* dinp, const float* dout, float p, uint64_t seed, size_t n,
                      GradStore store = GradStore::kAccumulate);

}  // namespace potop
