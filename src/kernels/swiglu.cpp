// σ(g) = 1 / (1 + e^(-g)) through exp_vec (kernels/vec_math.h), so the loops vectorise.
#pragma GCC optimize("no-trapping-math")  // see vec_math.h
#include "kernels/swiglu.h"

#include <cstddef>

#include "core/threads.h"
#include "kernels/vec_math.h"

namespace potop {

namespace {


inline float swish_sigmoid(float g) { return 1.0f / (1.0f + exp_vec(-g)); }

template <bool kAdd>
void swiglu_backward_impl(float* dgate_up, const float* dout, const float* gate_up, int N, int F) {
#pragma omp parallel for schedule(static) if (static_cast<size_t>(N) * F >= kParallelMinFloats)
  for (int n = 0; n < N; ++n) {
    const float* __restrict gate = gate_up + static_cast<size_t>(n) * 2 * F;
    const float* __restrict up = gate + F;
    const float* __restrict d = dout + static_cast<size_t>(n) * F;
    float* __restrict dgate = dgate_up + static_cast<size_t>(n) * 2 * F;
    float* __restrict dup = dgate + F;
#pragma omp simd
    for (int i = 0; i < F; ++i) {
      const float g = gate[i], s = swish_sigmoid(g);
      store_grad<kAdd>(dgate[i], d[i] * up[i] * s * (1.0f + g * (1.0f - s)));
      store_grad<kAdd>(dup[i], d[i] * g * s);
    }
  }
}

}  // namespace

void swiglu_forward(float* out, const float* gate_up, int N, int F) {
#pragma omp parallel for schedule(static) if (static_cast<size_t>(N) * F >= kParallelMinFloats)
  for (int n = 0; n < N; ++n) {
    const float* __restrict gate = gate_up + static_cast<size_t>(n) * 2 * F;
    const float* __restrict up = gate + F;
    float* __restrict o = out + static_cast<size_t>(n) * F;
#pragma omp simd
    for (int i = 0; i < F; ++i) o[i] = gate[i] * swish_sigmoid(gate[i]) * up[i];
  }
}

void swiglu_backward(float* dgate_up, const float* dout, const float* gate_up, int N, int F, GradStore store) {
  with_store(store, [&](auto add) { swiglu_backward_impl<add>(dgate_up, dout, gate_up, N, F); });
}

}  // namespace potop
