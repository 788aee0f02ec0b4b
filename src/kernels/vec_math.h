// Math written once for a scalar and for a SIMD vector. glibc's expf and tanhf are calls the
// vectoriser cannot see into (its SIMD variants are only declared under -ffast-math, which we do
// not use), so a GELU or softmax loop over them runs one element at a time. exp_vec is
// branch-free straight-line code: called on a float inside a loop, g++ turns it into 8-wide AVX2
// code; called on a vfloat (below), it is that vector code, written out. The two are the same
// source, and so the same operations in the same order: every lane of exp_vec(vfloat) is,
// bit for bit, exp_vec(float) of that lane (tests/unit/kernels/test_vec_math.cpp checks it).
//
// Files that call it on floats start with `#pragma GCC optimize("no-trapping-math")`: without it
// g++ will not if-convert the range clamps (it assumes FP exceptions may be observed). That flag
// only permits speculation of FP operations; it does not change any result, unlike -ffast-math.
// g++ does contract a*b + c into an FMA here (it does in C++ whatever -std says), but it contracts
// the same expressions whether they compute on a float or on a vector, so a lane still gets the
// scalar's bits.
#pragma once
#include <bit>
#include <concepts>
#include <cstdint>
#include <type_traits>

namespace potop {

// One SIMD register of floats through GCC's vector extensions: 8 lanes (AVX) with -march=native
// on an AVX machine, 4 (SSE) otherwise. Arithmetic and comparisons act lane by lane, a scalar
// operand is broadcast, and `mask ? a : b` selects lane by lane. attention.cpp computes on it.
#if defined(__AVX__)
inline constexpr int kLanes = 8;
#else
inline constexpr int kLanes = 4;
#endif
using vfloat = float __attribute__((vector_size(kLanes * sizeof(float))));
using vint = int32_t __attribute__((vector_size(kLanes * sizeof(float))));

// float, or a GCC vector of floats (vfloat or any other width): what exp_vec computes on.
template <class V>
concept FloatLanes = std::same_as<V, float> || (!std::is_class_v<V> && !std::is_pointer_v<V> && !std::is_array_v<V> &&
                                                requires(V v) {
                                                  { v[0] } -> std::same_as<float&>;
                                                });

// exp(x) in float, within ~1 ulp (Cephes' expf polynomial) for x in [-87.3, 88.3], lane by lane.
// Below -87.3 (where expf goes subnormal) it returns 0, so exp_vec(-inf) = 0; above 88.3 it
// saturates at exp(88.3) ≈ 2.2e38 instead of overflowing; NaN gives NaN.
template <FloatLanes V>
inline V exp_vec(V x) {
  constexpr float kLo = -87.3f, kHi = 88.3f;
  const V lo = V{} + kLo, hi = V{} + kHi, zero = V{};  // broadcast (for a vector) or the float itself
  const auto low = x <= kLo;  // exp(x) goes subnormal: 0 (NaN is not low)
  V xc = low ? lo : x;
  xc = xc > kHi ? hi : xc;
  // x = n ln2 + r, |r| <= ln2 / 2; ln2 split in two so n ln2 is exact enough.
  constexpr float kRound = 12582912.0f;  // 1.5 · 2^23: adding and subtracting it rounds to an integer
  const V n = (xc * 1.44269504088896341f + kRound) - kRound;
  const V r = (xc - n * 0.693359375f) - n * -2.12194440e-4f;
  V p = zero + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  V two_n;  // 2^n, n in [-126, 127]: n + 127 in the exponent field
  if constexpr (std::is_same_v<V, float>) {
    two_n = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  } else {
    using Int = decltype(x < x);  // the vector of int32 lanes matching V
    two_n = std::bit_cast<V>((__builtin_convertvector(n, Int) + 127) << 23);
  }
  const V y = p * two_n;
  return low ? zero : y;
}

}  // namespace potop
