// Decoding a trained encoder-decoder: greedy search and beam search with GNMT's length penalty.
// Each source is encoded once and projected once into the cross-attention's keys and values
// (EncoderDecoder::encode_source); each hypothesis keeps its own KV cache of the decoder's
// self-attention, so a step costs one position's work per hypothesis, and a step advances all
// alive hypotheses in one decoder pass (a batch of rows, caches reordered by the survivors'
// parents each step) — those of one sentence, or of several sentences searched together
// (translate_batch), each sentence leaving the batch when its search ends.
//
//   greedy:  y_t = argmax p(y | y_<t, x) until </s> or the length limit
//   beam K:  keep the K best prefixes by log p; a prefix ending in </s> is finished and scored
//            log p(Y) / lp(Y), lp(Y) = ((5 + |Y|) / 6)^α (|Y| counts </s>); stop when K are
//            finished or at the limit (unfinished prefixes then compete as they are); the best
//            score wins. With K = 1 this is greedy search.
#pragma once
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "models/encoder_decoder/encoder_decoder.h"

namespace potop {

// DecodeOptions (greedy or beam, the length penalty): nn/tasks.h.


// The target ids (without <s> and </s>) for source ids (ending in </s>, at most block_size), by
// beam search (options.beam hypotheses; 1 is greedy search done the beam's way).
std::vector<int> beam_search(EncoderDecoder& model, std::span<const int> source, const DecodeOptions& options);
// Greedy search, one hypothesis and no bookkeeping.
std::vector<int> greedy_search(EncoderDecoder& model, std::span<const int> source, const DecodeOptions& options);
// greedy_search for beam 1, else beam_search.
std::vector<int> translate_ids(EncoderDecoder& model, std::span<const int> source, const DecodeOptions& options);
// Sentences searched together by default (translate --input, translate eval, the dev BLEU of a
// training run): enough rows a step for the GEMMs to be efficient, few enough that the beams'
// caches stay in cache (docs/translation.md, "Several sentences at once").
constexpr int kDefaultBatchSentences = 8;
// translate_ids of every source, searched together: each step is one decoder pass over the alive
// hypotheses of all the sentences whose search has not ended. The same translations as one
// sentence at a time (up to the rounding of a many-row GEMM), in the order of `sources`.
std::vector<std::vector<int>> translate_batch(EncoderDecoder& model, std::span<const std::vector<int>> sources,
                                              const DecodeOptions& options);
// translate_batch over `sources`, `batch` sentences at a time, in order. Before each batch it asks
// `stop` (when given) and returns nullopt if it says so.
std::optional<std::vector<std::vector<int>>> translate_in_batches(EncoderDecoder& model,
                                                                  std::span<const std::vector<int>> sources,
                                                                  const DecodeOptions& options, size_t batch,
                                                                  const std::function<bool()>& stop = {});

}  // namespace potop
