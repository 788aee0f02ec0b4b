#include "generate/sampler.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace potop {

void validate(const SamplingOptions& o, int vocab_size) {
  if (!std::isfinite(o.temperature) || o.temperature < 0)
    throw Error("--temperature must be a finite number >= 0 (got " + std::to_string(o.temperature) + ")");
  if (o.top_k < 0) throw Error("--top-k must be >= 0 (got " + std::to_string(o.top_k) + "); 0 disables it");
  if (!(o.top_p > 0 && o.top_p <= 1)) throw Error("--top-p must be in (0, 1] (got " + std::to_string(o.top_p) + ")");
  (void)vocab_size;
}

int Sampler::sample(const float* logits, int V) {
  if (options_.temperature == 0.0f) return static_cast<int>(std::max_element(logits, logits + V) - logits);
  // Candidates sorted by logit, most likely first; ties broken by id so results never depend
  // on the sort's stability.
  candidates_.resize(V);
  for (int i = 0; i < V; ++i) candidates_[i] = {logits[i], i};
  auto by_logit = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
  int keep = options_.top_k > 0 ? std::min(options_.top_k, V) : V;
  std::partial_sort(candidates_.begin(), candidates_.begin() + keep, candidates_.end(), by_logit);
  // softmax(logits / temperature) over the kept candidates
  const float max_logit = candidates_[0].first;
  double total = 0;
  for (int i = 0; i < keep; ++i) {
    candidates_[i].first = static_cast<float>(std::exp((candidates_[i].first - max_logit) / options_.temperature));
    total += candidates_[i].first;
  }
  if (options_.top_p < 1.0f) {
    double cumulative = 0;
    for (int i = 0; i < keep; ++i) {
      cumulative += candidates_[i].first / total;
      if (cumulative >= options_.top_p) {
        keep = i + 1;
        break;
      }
    }
    total = 0;
    for (int i = 0; i < keep; ++i) total += candidates_[i].first;
  }
  double r = rng_.uniform() * total;
  for (int i = 0; i < keep; ++i) {
    r -= candidates_[i].first;
    if (r < 0) return candidates_[i].second;
  }
  return candidates_[keep - 1].second;
}

}  // namespace potop
