// Residual connection: out = a + b.
#include "kernels/residual.h"

namespace potop {

namespace {
constexpr size_t kParallelMin = 1 << 15;
}

void residual_forward(float* out, const float* a, const float* b, size_t n) {
  // out (n), a (n), b (n); out may alias a or b
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void residual_backward(float* da, float* db, const float* dout, size_t n) {
  // da (n), db (n), dout (n)
  // forward: out = a + b
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (size_t i = 0; i < n; ++i) {
    da[i] += dout[i];
    db[i] += dout[i];
  }
}

}  // namespace potop
