// Residual connection: out = a + b.
#pragma once
#include <cstddef>

namespace potop {

void residual_forward(float* out, const float* a, const float* b, size_t n);
// da += dout; db += dout
void residual_backward(float* da, float* db, const float* dout, size_t n);

}  // namespace potop
