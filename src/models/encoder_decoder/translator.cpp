#include "models/encoder_decoder/translator.h"

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

double length_penalty(size_t length, float alpha) { return std::pow((5.0 + double(length)) / 6.0, double(alpha)); }

int max_target(const EncoderDecoder& model, size_t source_length, const DecodeOptions& options) {
  return std::min<int>(model.config().block_size - 1, int(source_length) + options.max_extra);
}

// The ids a search may emit: the tokenizer's, never a pre-trained model's span-corruption
// sentinels past them (their logits are left out, as if -inf: the softmax is over the rest).
int emitted(const EncoderDecoder& model) { return model.config().emitted_vocab(); }

// A sentence's search is advanced one step at a time by its caller, who runs the decoder pass
// for it — alone, or in one pass with other sentences' searches. Each search has rows() alive
// hypotheses; hypothesis h continues with last_token(h) from cache(h); advance() takes the
// pass's logits (rows(), vocab_size) for them and reads the first emitted() of each row. Once
// done(), result() gives the translation and frees the caches.

// Greedy search: y_t = argmax p(y | y_<t, x), one hypothesis, no bookkeeping.
class GreedySearch {
 public:
  GreedySearch(const EncoderDecoder& model, size_t source_length, const DecodeOptions& options)
      : max_len_(max_target(model, source_length, options)), cache_(model.new_cache()) {}

  bool done() const { return done_; }
  int rows() const { return done_ ? 0 : 1; }
  int last_token(int) const { return out_.empty() ? kBosId : out_.back(); }
  KVCache& cache(int) { return cache_; }

  // logits: rows() rows of `stride` floats (here one row), of which the first V are the ids that
  // may be emitted.
  void advance(const float* logits, int /*stride*/, int V) {
    const int next = int(std::max_element(logits, logits + V) - logits);  // the first of equal maxima
    if (next == kEosId) {
      done_ = true;
      return;
    }
    out_.push_back(next);
    done_ = step_++ == max_len_;
  }

  std::vector<int> result() {
    cache_ = KVCache(0, 0, 0, 0);
    return std::move(out_);
  }

 private:
  int max_len_, step_ = 0;
  bool done_ = false;
  KVCache cache_;
  std::vector<int> out_;  // generated so far (without <s>)
};

// Beam search: the K best prefixes by log p, finished ones scored by GNMT's length penalty.
class BeamSearch {
 public:
  BeamSearch(const EncoderDecoder& model, size_t source_length, const DecodeOptions& options)
      : K_(options.beam), alpha_(options.alpha), max_len_(max_target(model, source_length, options)) {
    POTOP_CHECK(K_ >= 1, "beam_search: beam < 1");
    alive_.push_back({{}, 0.0});
    caches_.push_back(model.new_cache());
  }

  bool done() const { return step_ > max_len_ || alive_.empty() || int(finished_.size()) >= K_; }
  int rows() const { return done() ? 0 : int(alive_.size()); }
  int last_token(int h) const { return alive_[h].tokens.empty() ? kBosId : alive_[h].tokens.back(); }
  KVCache& cache(int h) { return caches_[h]; }

  void advance(const float* logits, int stride, int V) {
    // Every alive hypothesis extended by its K best tokens (K best overall is among them).
    struct Candidate {
      double logp;
      int from, token;
    };
    std::vector<Candidate> candidates;
    std::vector<int> ids(V);
    for (int h = 0; h < int(alive_.size()); ++h) {
      const std::vector<double> l = log_softmax(logits + size_t(h) * stride, V);
      std::iota(ids.begin(), ids.end(), 0);
      std::partial_sort(ids.begin(), ids.begin() + std::min(K_, V), ids.end(),
                        [&](int a, int b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
      for (int i = 0; i < std::min(K_, V); ++i) candidates.push_back({alive_[h].logp + l[ids[i]], h, ids[i]});
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.logp > b.logp; });
    // The survivors, each with its parent's cache: a copy, except that a parent's last surviving
    // child takes the parent's own (a parent may have several children, or none).
    std::vector<Hypothesis> next;
    std::vector<int> parents;
    for (const Candidate& c : candidates) {
      if (int(next.size()) + int(finished_.size()) >= K_) break;
      const Hypothesis& from = alive_[c.from];
      std::vector<int> tokens = from.tokens;
      if (c.token == kEosId || step_ == max_len_) {
        if (c.token != kEosId) tokens.push_back(c.token);
        finished_.push_back({std::move(tokens), c.logp / length_penalty(from.tokens.size() + 1, alpha_)});
        continue;
      }
      tokens.push_back(c.token);
      next.push_back({std::move(tokens), c.logp});
      parents.push_back(c.from);
    }
    std::vector<KVCache> next_caches;
    next_caches.reserve(parents.size());
    for (size_t i = 0; i < parents.size(); ++i) {
      const bool last_child = std::find(parents.begin() + i + 1, parents.end(), parents[i]) == parents.end();
      if (last_child)
        next_caches.push_back(std::move(caches_[parents[i]]));
      else
        next_caches.push_back(caches_[parents[i]]);
    }
    alive_ = std::move(next);
    caches_ = std::move(next_caches);
    ++step_;
  }

  std::vector<int> result() {
    for (Hypothesis& h : alive_)  // out of length: unfinished prefixes compete as they are
      finished_.push_back({h.tokens, h.logp / length_penalty(h.tokens.size(), alpha_)});
    alive_.clear();
    caches_.clear();
    POTOP_CHECK(!finished_.empty(), "beam search finished nothing");
    const auto best = std::max_element(finished_.begin(), finished_.end(),
                                       [](const Finished& a, const Finished& b) { return a.score < b.score; });
    return best->tokens;
  }

 private:
  struct Hypothesis {
    std::vector<int> tokens;  // generated so far (without <s>)
    double logp = 0;
  };
  struct Finished {
    std::vector<int> tokens;
    double score;
  };
  int K_;
  float alpha_;
  int max_len_, step_ = 0;
  std::vector<Hypothesis> alive_;
  std::vector<KVCache> caches_;  // caches_[h]: hypothesis h's self-attention keys and values
  std::vector<Finished> finished_;
};

// Sentences searched together: each step, one decoder pass over the alive hypotheses of every
// search not yet done (rows in sentence order, each reading its own sentence's keys and values);
// a search that ends hands back its translation and its memory is freed.
template <class Search>
std::vector<std::vector<int>> search_together(EncoderDecoder& model, std::span<const std::vector<int>> sources,
                                              const DecodeOptions& options) {
  const int V = model.config().vocab_size;
  const size_t n = sources.size();
  std::vector<MemoryKV> memories;
  std::vector<Search> searches;
  memories.reserve(n), searches.reserve(n);
  for (const std::vector<int>& source : sources) {
    POTOP_CHECK(!source.empty(), "translate: empty source");
    memories.push_back(model.encode_source(source.data(), int(source.size())));
    searches.emplace_back(model, source.size(), options);
  }
  std::vector<std::vector<int>> out(n);
  std::vector<char> ended(n, 0);
  std::vector<size_t> active;
  std::vector<int> tokens;
  std::vector<KVCache*> caches;
  std::vector<const MemoryKV*> rows_source;
  for (;;) {
    active.clear(), tokens.clear(), caches.clear(), rows_source.clear();
    for (size_t i = 0; i < n; ++i) {
      if (searches[i].rows() == 0) continue;
      active.push_back(i);
      for (int h = 0; h < searches[i].rows(); ++h) {
        tokens.push_back(searches[i].last_token(h));
        caches.push_back(&searches[i].cache(h));
        rows_source.push_back(&memories[i]);
      }
    }
    if (active.empty()) break;
    const float* logits = model.decode_rows(tokens.data(), int(tokens.size()), caches.data(), rows_source.data());
    for (size_t i : active) {
      const int rows = searches[i].rows();
      searches[i].advance(logits, V, emitted(model));
      logits += size_t(rows) * V;
      if (searches[i].done()) {
        out[i] = searches[i].result();
        memories[i] = MemoryKV();
        ended[i] = 1;
      }
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (!ended[i]) out[i] = searches[i].result();  // (a search cannot end before its first step)
  return out;
}

}  // namespace

std::vector<int> greedy_search(EncoderDecoder& model, std::span<const int> source, const DecodeOptions& options) {
  POTOP_CHECK(!source.empty(), "greedy_search: empty source");
  const int V = model.config().vocab_size;
  model.encode(source.data(), int(source.size()));
  GreedySearch search(model, source.size(), options);
  while (!search.done()) {
    const int last = search.last_token(0);
    search.advance(model.decode(&last, 1, search.cache(0)), V, emitted(model));
  }
  return search.result();
}

std::vector<int> translate_ids(EncoderDecoder& model, std::span<const int> source, const DecodeOptions& options) {
  return options.beam <= 1 ? greedy_search(model, source, options) : beam_search(model, source, options);
}

std::vector<int> beam_search(EncoderDecoder& model, std::span<const int> source, const DecodeOptions& options) {
  POTOP_CHECK(!source.empty() && options.beam >= 1, "beam_search: empty source or beam < 1");
  if (options.batched) {  // all hypotheses in one decoder pass a step
    const std::vector<std::vector<int>> one{std::vector<int>(source.begin(), source.end())};
    return std::move(search_together<BeamSearch>(model, one, options)[0]);
  }
  // One pass per hypothesis: the reference the batched pass is tested against.
  const int V = model.config().vocab_size;
  model.encode(source.data(), int(source.size()));
  BeamSearch search(model, source.size(), options);
  std::vector<float> logits;
  while (!search.done()) {
    const int n = search.rows();
    logits.resize(size_t(n) * V);
    for (int h = 0; h < n; ++h) {
      const int last = search.last_token(h);
      const float* row = model.decode(&last, 1, search.cache(h));
      std::copy(row, row + V, logits.begin() + size_t(h) * V);
    }
    search.advance(logits.data(), V, emitted(model));
  }
  return search.result();
}

std::vector<std::vector<int>> translate_batch(EncoderDecoder& model, std::span<const std::vector<int>> sources,
                                              const DecodeOptions& options) {
  return options.beam <= 1 ? search_together<GreedySearch>(model, sources, options)
                           : search_together<BeamSearch>(model, sources, options);
}

std::optional<std::vector<std::vector<int>>> translate_in_batches(EncoderDecoder& model,
                                                                  std::span<const std::vector<int>> sources,
                                                                  const DecodeOptions& options, size_t batch,
                                                                  const std::function<bool()>& stop) {
  POTOP_CHECK(batch >= 1);
  std::vector<std::vector<int>> out;
  for (size_t i = 0; i < sources.size(); i += batch) {
    if (stop && stop()) return std::nullopt;
    const auto chunk = sources.subspan(i, std::min(batch, sources.size() - i));
    for (std::vector<int>& ids : translate_batch(model, chunk, options)) out.push_back(std::move(ids));
  }
  return out;
}

}  // namespace potop
