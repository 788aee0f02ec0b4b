// How a backward kernel stores the gradient of an activation.
//
// Every backward kernel takes `GradStore store` for the activation gradients it writes (its input
// gradients: dinp, da and db, dq/dk/dv, dlogits, dpre):
//   kAccumulate  dinp += g, so gradients reaching a tensor along several paths sum up;
//   kOverwrite   dinp = g, for a buffer that holds nothing yet: the caller need not zero it first,
//                and the kernel never reads it. The values are exactly those of zeroing dinp and
//                then accumulating (0 + g is g), bit for bit except that a -0 stays -0.
// The default is kAccumulate everywhere. A kernel that lets its gradient be one of its inputs
// (dlogits = probs, dpre = dout) allows it only with kOverwrite.
// Parameter gradients (dweight, dbias, dwte, dwpe) always accumulate, whatever the store: they sum
// over the micro-batches of a step, and the optimizer zeroes them.
//
// Rounding: g++ contracts a * b + c into one fused multiply-add (in C++ it does so by default,
// -std=c++20 or not), so dinp += a * b rounds once where adding the stored g rounds twice:
// kAccumulate matches "dinp + (the kOverwrite result)" only to within that rounding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace potop {

enum class GradStore { kAccumulate, kOverwrite };

// The store rule above: dst += g, or dst = g without reading dst.
template <bool kAdd>
inline void store_grad(float& dst, float g) {
  if constexpr (kAdd) dst += g;
  else dst = g;
}

// Runs body(std::true_type{}) for kAccumulate and body(std::false_type{}) for kOverwrite, so a
// kernel's loop is compiled once for each store, with no test left inside it:
//   with_store(store, [&](auto add) { kernel_impl<add>(dinp, dout, scale, n); });
// where kernel_impl<kAdd> loops with store_grad<kAdd>(dinp[i], g). Pass the loop its numbers by
// value, as here: an OpenMP loop written inside the lambda would see captured references, and
// g++ reloads a captured float on every iteration (a store to dinp might change it) instead of
// vectorising; dropout_backward ran 5-10 times slower that way.
template <class Body>
inline void with_store(GradStore store, Body&& body) {
  if (store == GradStore::kAccumulate) body(std::true_type{});
  else body(std::false_type{});
}

// Whether the n floats at a and the n floats at b share memory. A kernel that lets its activation
// gradient alias an input allows it only as the very same buffer and only with kOverwrite
// (storing g over the input it has just read at the same index); summing into an input it still
// reads would compute garbage, so the kernels check for it.
inline bool overlap(const float* a, const float* b, size_t n) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return n > 0 && x < y + n * sizeof(float) && y < x + n * sizeof(float);
}

}  // namespace potop
