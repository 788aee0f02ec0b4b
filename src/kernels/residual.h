// Residual connection: out = a + b.
#pragma once
#include <cstddef>

#include "kernels/grad_store.h"

namespace potop {

void residual_forward(float* out, const float* a, const float* b, size_t n);
// da (n) += dout;  db (n) += dout   (= with GradStore::kOverwrite)
void residual_backward(float* da, float* db, const float* dout, size_t n, GradStore store = GradStore::kAccumulate);

}  // namespace potop
