#include "generate/sampler.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace potop {

namespace {

std::string num(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

}  // namespace

std::optional<SamplingProblem> find_problem(const SamplingOptions& o) {
  if (!std::isfinite(o.temperature) || o.temperature < 0)
    return SamplingProblem{"temperature", "must be a finite number >= 0 (got " + num(o.temperature) + ")"};
  if (o.top_k < 0) return SamplingProblem{"top_k", "must be >= 0 (got " + std::to_string(o.top_k) + "); 0 disables it"};
  if (!(o.top_p > 0 && o.top_p <= 1)) return SamplingProblem{"top_p", "must be in (0, 1] (got " + num(o.top_p) + ")"};
  if (!(o.min_p >= 0 && o.min_p < 1))
    return SamplingProblem{"min_p", "must be in [0, 1) (got " + num(o.min_p) + "); 0 disables it"};
  if (!(std::isfinite(o.repeat_penalty) && o.repeat_penalty > 0))
    return SamplingProblem{"repeat_penalty",
                           "must be a positive number (got " + num(o.repeat_penalty) + "); 1 disables it"};
  if (!std::isfinite(o.presence_penalty))
    return SamplingProblem{"presence_penalty",
                           "must be a finite number (got " + num(o.presence_penalty) + "); 0 disables it"};
  if (o.repeat_last_n < 0)
    return SamplingProblem{"repeat_last_n", "must be >= 0 (got " + std::to_string(o.repeat_last_n) + ")"};
  return std::nullopt;
}

void validate(const SamplingOptions& o, int vocab_size) {
  if (auto p = find_problem(o)) {
    std::string flag = p->field;
    std::replace(flag.begin(), flag.end(), '_', '-');
    throw Error("--" + flag + " " + p->message);
  }
  (void)vocab_size;
}

int Sampler::sample(const float* logits, int V, std::span<const int> recent) {
  const bool penalties = (options_.repeat_penalty != 1.0f || options_.presence_penalty != 0.0f) && !recent.empty();
  if (penalties) {
    penalised_.assign(logits, logits + V);
    const size_t n = std::min(recent.size(), static_cast<size_t>(options_.repeat_last_n));
    seen_.assign(static_cast<size_t>(V), 0);
    for (const int t : recent.subspan(recent.size() - n)) {
      if (t < 0 || t >= V || seen_[static_cast<size_t>(t)]) continue;
      seen_[static_cast<size_t>(t)] = 1;
      float& l = penalised_[static_cast<size_t>(t)];
      l = l > 0 ? l / options_.repeat_penalty : l * options_.repeat_penalty;
      l -= options_.presence_penalty;
    }
    logits = penalised_.data();
  }
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
  }
  if (options_.min_p > 0.0f) {
    // The first candidate is the likeliest: its weight is exp(0) = 1.
    int k = 1;
    while (k < keep && candidates_[k].first >= options_.min_p) ++k;
    keep = k;
  }
  total = 0;
  for (int i = 0; i < keep; ++i) total += candidates_[i].first;
  double r = rng_.uniform() * total;
  for (int i = 0; i < keep; ++i) {
    r -= candidates_[i].first;
    if (r < 0) return candidates_[i].second;
  }
  return candidates_[keep - 1].second;
}

}  // namespace potop
