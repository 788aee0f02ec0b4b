#include "nn/layer.h"

#include <algorithm>

#include "core/profile.h"
#include "core/rng.h"
#include "kernels/dropout.h"
#include "kernels/linear.h"
#include "kernels/quant.h"

namespace potop {

void linear(const Frame& f, float* out, const float* in, ParamId w, ParamId b, int N, int C, int OC) {
  const QuantizedMatrix* q = f.params.quantized(w);
  if (!q) return linear_forward(out, in, f.value(w), f.value(b), N, C, OC);
  const float* bias = f.value(b);
  if (bias)
    for (int n = 0; n < N; ++n) std::copy(bias, bias + OC, out + static_cast<size_t>(n) * OC);
  quant_matmul(q->type, q->layout, q->data.data(), OC, C, in, N, out, /*accumulate=*/bias != nullptr);
}

uint64_t LayerPass::site_seed(int site) const { return hash64(dropout_seed, static_cast<uint64_t>(site)); }

const float* dropout_grad(float* scratch, const float* dout, const LayerPass& pass, int site, size_t n) {
  if (pass.dropout == 0.0f) return dout;
  POTOP_PROFILED("dropout", dropout_backward(scratch, dout, pass.dropout, pass.site_seed(site), n, GradStore::kOverwrite));
  return scratch;
}

}  // namespace potop
