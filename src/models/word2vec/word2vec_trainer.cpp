#include "models/word2vec/word2vec_trainer.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <string>

#include "core/error.h"
#include "core/rng.h"
#include "models/word2vec/negative_sampling.h"

namespace potop {
namespace {

// word2vec.c's linear congruential generator: cheap enough to draw per word and per negative.
struct Lcg {
  uint64_t state;
  uint64_t next() {
    state = state * 25214903917ull + 11;
    return state;
  }
  uint32_t u32() { return static_cast<uint32_t>(next() >> 16); }
};

// Everything a thread reads, shared, plus the words-done counter that sets the learning rate.
struct Shared {
  const Corpus& corpus;
  const Word2VecOptions& options;
  std::vector<uint64_t> keep;      // subsampling thresholds
  std::vector<int32_t> table;      // unigram^0.75 table
  float* input;
  float* output;
  int64_t words_total;
  std::atomic<int64_t> words_done{0};
  std::atomic<bool> stop{false};
};

double current_alpha(const Shared& s) {
  const double done = static_cast<double>(s.words_done.load(std::memory_order_relaxed));
  const double fraction = 1.0 - done / (static_cast<double>(s.words_total) + 1.0);
  return s.options.alpha * std::max(fraction, 1e-4);
}

// Per-thread buffers and the example loop.
class Worker {
 public:
  Worker(Shared& s, int thread) : s_(s), D_(s.options.dim), rng_{s.options.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(thread) + 1} {
    h_.resize(static_cast<size_t>(D_));
    dh_.resize(static_cast<size_t>(D_));
    rows_.resize(static_cast<size_t>(s.options.negative) + 1);
  }

  // Trains on sentence s once: subsampled, then every position's window.
  void sentence(int64_t s, float alpha) {
    const Corpus& c = s_.corpus;
    sentence_.clear();
    for (int64_t i = c.sentence_starts[s]; i < c.sentence_starts[s + 1]; ++i) {
      const int32_t w = c.ids[i];
      if (s_.keep[w] > (uint64_t{1} << 32) - 1 || rng_.u32() < s_.keep[w]) sentence_.push_back(w);
    }
    const int n = static_cast<int>(sentence_.size());
    for (int pos = 0; pos < n; ++pos) {
      const int b = static_cast<int>(rng_.next() % static_cast<uint64_t>(s_.options.window));
      const int reach = s_.options.window - b;  // dynamic window: 1..window
      const int lo = std::max(0, pos - reach), hi = std::min(n - 1, pos + reach);
      if (s_.options.model == Word2VecModel::kSkipgram) {
        for (int j = lo; j <= hi; ++j)
          if (j != pos) skipgram_pair(sentence_[pos], sentence_[j], alpha);
      } else {
        cbow(pos, lo, hi, alpha);
      }
    }
  }

 private:
  float* in_row(int32_t w) { return s_.input + static_cast<int64_t>(w) * D_; }
  float* out_row(int32_t w) { return s_.output + static_cast<int64_t>(w) * D_; }

  // The output rows of one example: the word, then up to `negative` draws other than it.
  int targets(int32_t word) {
    int n = 0;
    rows_[n++] = out_row(word);
    for (int k = 0; k < s_.options.negative; ++k) {
      const int32_t t = s_.table[rng_.u32() % s_.table.size()];
      if (t != word) rows_[n++] = out_row(t);
    }
    return n;
  }

  // Skip-gram: the context word's vector predicts the centre word.
  void skipgram_pair(int32_t center, int32_t context, float alpha) {
    float* h = in_row(context);
    std::fill(dh_.begin(), dh_.end(), 0.0f);
    const int n = targets(center);
    negative_sampling_sgd(dh_.data(), rows_.data(), h, n, D_, alpha);
    for (int i = 0; i < D_; ++i) h[i] += dh_[i];
  }

  // CBOW: the mean of the context vectors predicts the centre word; every context vector gets
  // the whole input gradient (word2vec.c's and gensim's choice with the mean).
  void cbow(int pos, int lo, int hi, float alpha) {
    std::fill(h_.begin(), h_.end(), 0.0f);
    int count = 0;
    for (int j = lo; j <= hi; ++j) {
      if (j == pos) continue;
      const float* v = in_row(sentence_[j]);
      for (int i = 0; i < D_; ++i) h_[i] += v[i];
      ++count;
    }
    if (count == 0) return;
    const float inv = 1.0f / static_cast<float>(count);
    for (int i = 0; i < D_; ++i) h_[i] *= inv;
    std::fill(dh_.begin(), dh_.end(), 0.0f);
    const int n = targets(sentence_[pos]);
    negative_sampling_sgd(dh_.data(), rows_.data(), h_.data(), n, D_, alpha);
    for (int j = lo; j <= hi; ++j) {
      if (j == pos) continue;
      float* v = in_row(sentence_[j]);
      for (int i = 0; i < D_; ++i) v[i] += dh_[i];
    }
  }

  Shared& s_;
  int D_;
  Lcg rng_;
  std::vector<float> h_, dh_;
  std::vector<float*> rows_;
  std::vector<int32_t> sentence_;
};

// Sentence ranges with about equal word counts, one per thread.
std::vector<int64_t> split_sentences(const Corpus& c, int parts) {
  std::vector<int64_t> bounds{0};
  const int64_t words = static_cast<int64_t>(c.ids.size());
  int64_t s = 0;
  for (int p = 1; p < parts; ++p) {
    const int64_t target = words * p / parts;
    while (s < c.sentences() && c.sentence_starts[s] < target) ++s;
    bounds.push_back(s);
  }
  bounds.push_back(c.sentences());
  return bounds;
}

// word2vec.c's start: the input vectors uniform in [-1, 1) / dim from its generator, the output
// vectors zero.
WordVectors initial_vectors(int V, const Word2VecOptions& options) {
  const int D = options.dim;
  WordVectors vectors;
  vectors.dim = D;
  vectors.input.resize(static_cast<size_t>(V) * D);
  vectors.output.assign(static_cast<size_t>(V) * D, 0.0f);
  Lcg init{options.seed};
  for (float& x : vectors.input)
    x = (static_cast<float>(init.u32() & 0xFFFF) / 32768.0f - 1.0f) / static_cast<float>(D);
  return vectors;
}

}  // namespace

void validate(const Word2VecOptions& o) {
  auto refuse = [](const std::string& flag, const std::string& value, const std::string& need) {
    throw Error(flag + " " + value + ": " + need);
  };
  if (o.dim < 1 || o.dim > 100000) refuse("--dim", std::to_string(o.dim), "must be between 1 and 100000");
  if (o.window < 1) refuse("--window", std::to_string(o.window), "must be at least 1");
  if (o.negative < 1 || o.negative > 1000)
    refuse("--negative", std::to_string(o.negative), "must be between 1 and 1000 (negative sampling is the only objective)");
  if (!(o.sample >= 0 && o.sample < 1)) refuse("--sample", std::to_string(o.sample), "must be in [0, 1)");
  if (o.epochs < 1) refuse("--epochs", std::to_string(o.epochs), "must be at least 1");
  if (!(o.alpha > 0 && o.alpha <= 10)) refuse("--alpha", std::to_string(o.alpha), "must be in (0, 10]");
  if (o.threads < 1 || o.threads > 1024) refuse("--threads", std::to_string(o.threads), "must be between 1 and 1024");
}

WordVectors train_word2vec(const Vocabulary& vocab, const Corpus& corpus, const Word2VecOptions& options,
                           const std::function<void(const Word2VecProgress&)>& progress,
                           const std::function<bool()>& should_stop, double progress_seconds) {
  validate(options);
  WordVectors vectors = initial_vectors(vocab.size(), options);
  Shared s{corpus, options, subsampling_thresholds(vocab, options.sample), unigram_table(vocab),
           vectors.input.data(), vectors.output.data(),
           static_cast<int64_t>(corpus.ids.size()) * options.epochs};
  const int threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(options.threads, corpus.sentences())));
  const std::vector<int64_t> bounds = split_sentences(corpus, threads);
  // words_done advances in batches (word2vec.c: every 10000 words); smaller ones on a small
  // corpus, so that the learning rate still falls smoothly.
  const int64_t batch = std::clamp<int64_t>(static_cast<int64_t>(corpus.ids.size()) / (threads * 50), 1, 10000);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto report = [&] {
    Word2VecProgress p;
    p.words_done = s.words_done.load();
    p.words_total = s.words_total;
    p.alpha = current_alpha(s);
    p.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    progress(p);
  };

#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    Worker worker(s, t);
    auto last_report = Clock::now();
    int64_t pending = 0;  // words not yet added to words_done
    float alpha = static_cast<float>(options.alpha);
    for (int epoch = 0; epoch < options.epochs && !s.stop.load(std::memory_order_relaxed); ++epoch) {
      for (int64_t sent = bounds[t]; sent < bounds[t + 1]; ++sent) {
        worker.sentence(sent, alpha);
        pending += corpus.sentence_starts[sent + 1] - corpus.sentence_starts[sent];
        if (pending < batch) continue;
        s.words_done.fetch_add(pending, std::memory_order_relaxed);
        pending = 0;
        alpha = static_cast<float>(current_alpha(s));
        if (t == 0 && Clock::now() - last_report > std::chrono::duration<double>(progress_seconds)) {
          last_report = Clock::now();
          if (should_stop && should_stop()) s.stop = true;
          if (progress) report();
        }
        if (s.stop.load(std::memory_order_relaxed)) break;
      }
    }
    s.words_done.fetch_add(pending, std::memory_order_relaxed);
  }
  if (progress) report();
  return vectors;
}

}  // namespace potop
