#include "nn/layer.h"

#include "core/profile.h"
#include "core/rng.h"
#include "kernels/dropout.h"

namespace potop {

uint64_t LayerPass::site_seed(int site) const { return hash64(dropout_seed, static_cast<uint64_t>(site)); }

const float* dropout_grad(float* scratch, const float* dout, const LayerPass& pass, int site, size_t n) {
  if (pass.dropout == 0.0f) return dout;
  POTOP_PROFILED("dropout", dropout_backward(scratch, dout, pass.dropout, pass.site_seed(site), n, GradStore::kOverwrite));
  return scratch;
}

}  // namespace potop
