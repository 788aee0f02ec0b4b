#include "generate/translator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace potop {

namespace {

// log softmax of one row of logits, in double.
std::vector<double> log_softmax(const float* logits, int V) {
  const float mx = *std::max_element(logits, logits + V);
  double sum = 0;
  for (int v = 0; v < V; ++v) sum += std::exp(double(logits[v]) - mx);
  const double lse = mx + std::log(sum);
  std::vector<double> out(V);
  for (int v = 0; v < V; ++v) out[v] = logits[v] - lse;
  return out;
}

struct Hypothesis {
  std::vector<int> tokens;  // generated so far (without <s>)
  double logp = 0;
};

double length_penalty(size_t length, float alpha) { return std::pow((5.0 + double(length)) / 6.0, double(alpha)); }

int max_target(const EncoderDecoder& model, size_t source_length, const DecodeOptions& options) {
  return std::min<int>(model.config().block_size - 1, int(source_length) + options.max_extra);
}

}  // namespace

std::vector<int> greedy_search(EncoderDecoder& model, std::span<const int> source, const DecodeOptions& options) {
  POTOP_CHECK(!source.empty(), "greedy_search: empty source");
  const int V = model.config().vocab_size, max_len = max_target(model, source.size(), options);
  model.encode(source.data(), int(source.size()));
  KVCache cache = model.new_cache();
  std::vector<int> out;
  int last = kBosId;
  for (int step = 0; step <= max_len; ++step) {
    const float* logits = model.decode(&last, 1, cache);
    const int next = int(std::max_element(logits, logits + V) - logits);  // the first of equal maxima
    if (next == kEosId) break;
    out.push_back(next);
    if (step == max_len) break;
    last = next;
  }
  return out;
}

std::vector<int> translate_ids(EncoderDecoder& model, std::span<const int> source, const DecodeOptions& options) {
  return options.beam <= 1 ? greedy_search(model, source, options) : beam_search(model, source, options);
}

std::vector<int> beam_search(EncoderDecoder& model, std::span<const int> source, const DecodeOptions& options) {
  POTOP_CHECK(!source.empty() && options.beam >= 1, "beam_search: empty source or beam < 1");
  const int V = model.config().vocab_size, K = options.beam;
  const int max_len = max_target(model, source.size(), options);
  model.encode(source.data(), int(source.size()));
  std::vector<Hypothesis> alive{{{}, 0.0}};
  std::vector<KVCache> caches;  // caches[h]: hypothesis h's self-attention keys and values
  caches.push_back(model.new_cache());
  struct Finished {
    std::vector<int> tokens;
    double score;
  };
  std::vector<Finished> finished;
  std::vector<int> last;
  for (int step = 0; step <= max_len && !alive.empty() && int(finished.size()) < K; ++step) {
    // Every alive hypothesis advanced by one token: all of them in one decoder pass, or one pass
    // each (the reference the batched pass is tested against).
    const int n = int(alive.size());
    last.resize(n);
    for (int h = 0; h < n; ++h) last[h] = alive[h].tokens.empty() ? kBosId : alive[h].tokens.back();
    std::vector<std::vector<double>> lp(n);
    if (options.batched) {
      std::vector<KVCache*> rows(n);
      for (int h = 0; h < n; ++h) rows[h] = &caches[h];
      const float* logits = model.decode_rows(last.data(), n, rows.data());
      for (int h = 0; h < n; ++h) lp[h] = log_softmax(logits + size_t(h) * V, V);
    } else {
      for (int h = 0; h < n; ++h) lp[h] = log_softmax(model.decode(&last[h], 1, caches[h]), V);
    }
    // Every alive hypothesis extended by its K best tokens (K best overall is among them).
    struct Candidate {
      double logp;
      int from, token;
    };
    std::vector<Candidate> candidates;
    std::vector<int> ids(V);
    for (int h = 0; h < n; ++h) {
      std::iota(ids.begin(), ids.end(), 0);
      const std::vector<double>& l = lp[h];
      std::partial_sort(ids.begin(), ids.begin() + std::min(K, V), ids.end(),
                        [&](int a, int b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
      for (int i = 0; i < std::min(K, V); ++i) candidates.push_back({alive[h].logp + l[ids[i]], h, ids[i]});
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.logp > b.logp; });
    // The survivors, each with a copy of its parent's cache (a parent may have several children).
    std::vector<Hypothesis> next;
    std::vector<KVCache> next_caches;
    for (const Candidate& c : candidates) {
      if (int(next.size()) + int(finished.size()) >= K) break;
      const Hypothesis& from = alive[c.from];
      std::vector<int> tokens = from.tokens;
      if (c.token == kEosId || step == max_len) {
        if (c.token != kEosId) tokens.push_back(c.token);
        finished.push_back({std::move(tokens), c.logp / length_penalty(from.tokens.size() + 1, options.alpha)});
        continue;
      }
      tokens.push_back(c.token);
      next.push_back({std::move(tokens), c.logp});
      next_caches.push_back(caches[c.from]);
    }
    alive = std::move(next);
    caches = std::move(next_caches);
  }
  for (Hypothesis& h : alive)  // out of length: unfinished prefixes compete as they are
    finished.push_back({h.tokens, h.logp / length_penalty(h.tokens.size(), options.alpha)});
  POTOP_CHECK(!finished.empty(), "beam search finished nothing");
  const auto best = std::max_element(finished.begin(), finished.end(),
                                     [](const Finished& a, const Finished& b) { return a.score < b.score; });
  return best->tokens;
}

}  // namespace potop
