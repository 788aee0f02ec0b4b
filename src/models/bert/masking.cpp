#include "models/bert/masking.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"

namespace potop {

int masked_count(const MaskingRule& rule, int n) {
  if (n <= 0) return 0;
  return std::clamp(static_cast<int>(std::lround(rule.fraction * n)), 1, n);
}

void mask_tokens(std::span<int> tokens, std::span<int> targets, int first, int end, const MaskingRule& rule, Rng& rng) {
  POTOP_CHECK(first >= 0 && first <= end && size_t(end) <= tokens.size() && targets.size() >= tokens.size(),
              "mask_tokens: span outside the sequence");
  POTOP_CHECK(rule.mask_id >= 0 && rule.vocab_end > rule.first_random, "mask_tokens: no [MASK] or no ordinary token");
  const int n = end - first, k = masked_count(rule, n);
  // k distinct positions, uniformly: the first k of a partial Fisher-Yates shuffle.
  std::vector<int> order(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) order[size_t(i)] = first + i;
  rng.shuffle_first(order, uint64_t(k));
  for (int i = 0; i < k; ++i) {
    const int t = order[size_t(i)];
    targets[size_t(t)] = tokens[size_t(t)];
    const double u = rng.uniform();
    if (u < 0.8) tokens[size_t(t)] = rule.mask_id;
    else if (u < 0.9) tokens[size_t(t)] = rule.first_random + static_cast<int>(rng.below(uint64_t(rule.vocab_end - rule.first_random)));
  }
}

}  // namespace potop
