// Scalar math written so that g++ vectorises the loops that call it. glibc's expf and tanhf
// are calls the vectoriser cannot see into (its SIMD variants are only declared under
// -ffast-math, which we do not use), so a GELU or softmax loop over them runs one element at a
// time. exp_vec is branch-free straight-line code that becomes 8-wide AVX2 code.
//
// Files that use it start with `#pragma GCC optimize("no-trapping-math")`: without it g++ will
// not if-convert the range clamps (it assumes FP exceptions may be observed). That flag only
// permits speculation of FP operations; it does not change any result, unlike -ffast-math.
#pragma once
#include <bit>
#include <cstdint>

namespace potop {

// exp(x) in float, within ~1 ulp (Cephes' expf polynomial) for x in [-87.3, 88.3].
// Below -87.3 (where expf goes subnormal) it returns 0, so exp_vec(-inf) = 0; above 88.3 it
// saturates at exp(88.3) ≈ 2.2e38 instead of overflowing; NaN gives NaN.
inline float exp_vec(float x) {
  constexpr float kLo = -87.3f, kHi = 88.3f;
  float xc = x < kLo ? kLo : x;
  xc = xc > kHi ? kHi : xc;
  // x = n ln2 + r, |r| <= ln2 / 2; ln2 split in two so n ln2 is exact enough.
  constexpr float kRound = 12582912.0f;  // 1.5 · 2^23: adding and subtracting it rounds to an integer
  const float n = (xc * 1.44269504088896341f + kRound) - kRound;
  const float r = (xc - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  const float two_n = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);  // 2^n, n in [-126, 127]
  const float y = p * two_n;
  return xc == kLo ? 0.0f : y;
}

}  // namespace potop
