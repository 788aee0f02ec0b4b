// Residual connection: out = a + b.
#include "kernels/residual.h"

namespace potop {

namespace {
constexpr size_t kResidualParallelMin = 1 << 15;

// da, db (n) += dout, or = with kAdd false (see with_store in grad_store.h).
template <bool kAdd>
void residual_backward_impl(float* da, float* db, const float* dout, size_t n) {
#pragma omp parallel for schedule(static) if (n >= kResidualParallelMin)
  for (size_t i = 0; i < n; ++i) {
    store_grad<kAdd>(da[i], dout[i]);
    store_grad<kAdd>(db[i], dout[i]);
  }
}
}  // namespace

void residual_forward(float* out, const float* a, const float* b, size_t n) {
  // out (n), a (n), b (n); out may alias a or b
#pragma omp parallel for schedule(static) if (n >= kResidualParallelMin)
  for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void residual_backward(float* da, float* db, const float* dout, size_t n, GradStore store) {
  // da (n), db (n), dout (n)
  // forward: out = a + b
  with_store(store, [&](auto add) { residual_backward_impl<add>(da, db, dout, n); });
}

}  // namespace potop
