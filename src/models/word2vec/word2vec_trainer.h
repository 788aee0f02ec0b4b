// Training word vectors as word2vec.c does (Mikolov et al. 2013), flag for flag with word2vec.c
// and gensim so the same settings can be run A/B:
//  - CBOW predicts a word from the mean of its context's vectors; skip-gram predicts the word
//    from each context word's vector in turn (word2vec.c's and gensim's order of the pair);
//  - negative sampling: the word and `negative` draws from the unigram^0.75 table
//    (kernels/negative_sampling.h is the update);
//  - frequent words subsampled with `sample`; dynamic window: for each word a window b drawn
//    uniformly from 1..window;
//  - the learning rate falls linearly from alpha to alpha·1e-4 over epochs × the corpus's words;
//  - Hogwild: `threads` threads each take a contiguous share of the sentences and update the
//    shared vectors without locks, as word2vec.c does. So a run with threads > 1 is not
//    reproducible bit for bit; with 1 thread and the same seed it is.
// Vectors start as gensim 4's: input uniform in [-1, 1) / dim (word2vec.c's range is half that;
// with it CBOW scored ~1 analogy point below gensim, docs/word2vec.md), output zero.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "models/word2vec/vocabulary.h"

namespace potop {

enum class Word2VecModel { kCbow, kSkipgram };

struct Word2VecOptions {
  Word2VecModel model = Word2VecModel::kCbow;
  int dim = 100;
  int window = 5;
  int negative = 5;
  double sample = 1e-3;
  int epochs = 5;
  double alpha = 0.025;
  int threads = 1;
  uint64_t seed = 1;
};

// Throws potop::Error naming the flag (--dim, --window, --negative, --sample, --epochs, --alpha,
// --threads) whose value is out of range.
void validate(const Word2VecOptions& options);

struct WordVectors {
  int dim = 0;
  std::vector<float> input;   // (V, dim): the word vectors
  std::vector<float> output;  // (V, dim): the negative-sampling output vectors (word2vec.c's syn1neg)
};

struct Word2VecProgress {
  int64_t words_done = 0;   // corpus words (before subsampling) consumed, all epochs
  int64_t words_total = 0;  // epochs × corpus words
  double alpha = 0;
  double seconds = 0;
};

// Trains; calls progress (from one thread) about every `progress_seconds`, and once at the end.
// should_stop() is polled the same way: when it returns true, training stops early and the
// vectors as they are are returned (the caller decides whether to write them).
WordVectors train_word2vec(const Vocabulary& vocab, const Corpus& corpus, const Word2VecOptions& options,
                           const std::function<void(const Word2VecProgress&)>& progress = {},
                           const std::function<bool()>& should_stop = {}, double progress_seconds = 1.0);

}  // namespace potop
