// Random numbers that are reproducible and whose state can be saved.
//  - Rng: a sequential generator (xoshiro256**, seeded through splitmix64) for weight
//    initialisation, data sampling and token sampling. Its whole state is four uint64s, so a
//    checkpoint can store it and a resumed run continues the same stream.
//  - counter_uniform: a stateless hash of (seed, counter) -> [0, 1). Dropout uses it so the
//    mask of element i depends only on (seed, i): the backward pass regenerates the mask
//    instead of storing it, and the result does not depend on how threads split the work.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <ranges>
#include <utility>

namespace potop {

inline uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A seed from the system's entropy (what a seed of -1 asks for), of 53 bits so that JSON readers
// and JavaScript clients get it back exactly.
inline uint64_t entropy_seed() {
  std::random_device device;
  return ((static_cast<uint64_t>(device()) << 32) ^ device()) & ((uint64_t(1) << 53) - 1);
}

// A 64-bit mix of two values (seed and counter) with good avalanche.
inline uint64_t hash64(uint64_t seed, uint64_t counter) {
  uint64_t x = seed ^ (counter * 0xD1B54A32D192ED03ull);
  return splitmix64(x);
}

// Uniform in [0, 1) with 24 bits, exactly representable as float.
inline float counter_uniform(uint64_t seed, uint64_t counter) {
  return static_cast<float>(hash64(seed, counter) >> 40) * (1.0f / 16777216.0f);
}

class Rng {
 public:
  using State = std::array<uint64_t, 4>;

  explicit Rng(uint64_t seed = 0) { reseed(seed); }
  void reseed(uint64_t seed) {
    uint64_t x = seed;
    for (auto& s : s_) s = splitmix64(x);
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1), 53 bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), n > 0 (Lemire's method, bias-free enough for n << 2^64).
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(next_u64()) * n) >> 64); }
  // Standard normal via Box-Muller; uses two draws per value so the state stays four words.
  double normal() {
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  // Fisher-Yates from the back: every order of `items` equally likely, drawing below(n),
  // below(n - 1), ..., below(2).
  template <std::ranges::random_access_range Items>
  void shuffle(Items&& items) {
    const auto first = std::ranges::begin(items);
    using Offset = std::ranges::range_difference_t<Items>;
    for (auto i = static_cast<uint64_t>(std::ranges::size(items)); i > 1; --i)
      std::swap(first[Offset(i - 1)], first[Offset(below(i))]);
  }
  // Fisher-Yates from the front, stopped after k: the first k of `items` are k distinct ones,
  // every choice and order equally likely, drawing below(n), below(n - 1), ..., below(n - k + 1);
  // the rest stay in some order.
  template <std::ranges::random_access_range Items>
  void shuffle_first(Items&& items, uint64_t k) {
    const auto first = std::ranges::begin(items);
    using Offset = std::ranges::range_difference_t<Items>;
    const auto n = static_cast<uint64_t>(std::ranges::size(items));
    for (uint64_t i = 0; i < k && i < n; ++i) std::swap(first[Offset(i)], first[Offset(i + below(n - i))]);
  }

  State state() const { return s_; }
  void set_state(const State& s) { s_ = s; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  State s_{};
};

}  // namespace potop
