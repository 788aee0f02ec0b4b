#include "kernels/column_sums.h"

#include <algorithm>

namespace potop {

void add_chunk_sums(float* dst, const float* partial, int chunks, int width) {
  // Threads own disjoint column blocks; each adds the chunks in order.
  constexpr int kBlock = 256;
  const int blocks = (width + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (static_cast<size_t>(chunks) * width > 65536)
  for (int blk = 0; blk < blocks; ++blk) {
    const int c0 = blk * kBlock, w = std::min(kBlock, width - c0);
    float acc[kBlock] = {};
    for (int ch = 0; ch < chunks; ++ch) {
      const float* p = partial + static_cast<size_t>(ch) * width + c0;
      for (int c = 0; c < w; ++c) acc[c] += p[c];
    }
    for (int c = 0; c < w; ++c) dst[c0 + c] += acc[c];
  }
}

}  // namespace potop
