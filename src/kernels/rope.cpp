#include "kernels/rope.h"

#include <cmath>
#include <cstddef>

#include "core/error.h"
#include "core/scratch.h"

namespace potop {

namespace {

// Rotates the heads of every row by sign · angle: +1 forward, -1 backward.
void rotate(float* x, int rows, int stride, int heads, int D, const int* positions, const float* frequencies,
            float sign) {
  POTOP_CHECK(D % 2 == 0, "rotary embeddings need an even head size");
  const int half = D / 2;
#pragma omp parallel for schedule(static) if (static_cast<size_t>(rows) * heads * D > 16384)
  for (int r = 0; r < rows; ++r) {
    struct Tag;
    float* cs = thread_scratch<Tag>(0, 2 * static_cast<size_t>(half));  // cos, then sin, of each pair's angle
    // Hugging Face: freqs = pos · inv_freq in float, then cos and sin of that float.
    for (int i = 0; i < half; ++i) {
      const float angle = static_cast<float>(positions[r]) * frequencies[i];
      cs[i] = static_cast<float>(std::cos(static_cast<double>(angle)));
      cs[half + i] = sign * static_cast<float>(std::sin(static_cast<double>(angle)));
    }
    float* row = x + static_cast<size_t>(r) * stride;
    for (int h = 0; h < heads; ++h) {
      float* __restrict a = row + static_cast<size_t>(h) * D;
      float* __restrict b = a + half;
#pragma omp simd
      for (int i = 0; i < half; ++i) {
        const float c = cs[i], s = cs[half + i];
        const float ai = a[i], bi = b[i];
        a[i] = ai * c - bi * s;
        b[i] = bi * c + ai * s;
      }
    }
  }
}

}  // namespace

std::vector<float> rope_frequencies(int D, float theta) {
  std::vector<float> f(D / 2);
  // inv_freq = 1 / θ^(arange(0, D, 2) / D), each step in float as torch does it
  for (int i = 0; i < D / 2; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(D);
    f[i] = 1.0f / std::pow(theta, exponent);
  }
  return f;
}

void rope_forward(float* x, int rows, int stride, int heads, int D, const int* positions, const float* frequencies) {
  rotate(x, rows, stride, heads, D, positions, frequencies, 1.0f);
}

void rope_backward(float* dx, int rows, int stride, int heads, int D, const int* positions, const float* frequencies) {
  rotate(dx, rows, stride, heads, D, positions, frequencies, -1.0f);
}

}  // namespace potop
