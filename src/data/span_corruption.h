// T5's span corruption ("Exploring the Limits of Transfer Learning with a Unified Text-to-Text
// Transformer", §3.1.4; its random_spans_noise_mask): a denoising objective for pre-training an
// encoder-decoder on plain text. Of a chunk of L tokens, round(L·density) are noise, in
// round(noise / mean_span) spans; the noise and non-noise lengths are each a random segmentation
// (every split of the count into that many positive parts equally likely) and they interleave
// starting with non-noise. The input is the non-noise tokens with each noise span replaced by one
// sentinel; the target is every sentinel followed by the span it replaced, then </s>:
//
//   tokens  Thank you for inviting me to your party last week .
//   input   Thank you <X> me to your party <Y> week . </s>
//   target  <X> for inviting <Y> last </s>
//
// Sentinel i is the id first_sentinel + i: ids past the tokenizer's (T5's extra_ids), so the
// model's vocabulary is the tokenizer's plus max_sentinels(longest chunk).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.h"

namespace potop {

struct SpanCorruption {
  double noise_density = 0.15;  // the fraction of tokens corrupted
  double mean_span = 3.0;       // the mean length of a corrupted span
};

// The noise mask of `length` tokens (true: corrupted), T5's random_spans_noise_mask: at least
// one noise token and one non-noise token (for length >= 2), at least one span.
std::vector<bool> random_spans_noise_mask(int length, const SpanCorruption& c, Rng& rng);

// The number of noise spans of a chunk of `length` tokens (the mask's, without drawing it).
int noise_spans(int length, const SpanCorruption& c);
// Sentinels enough for every chunk of up to `longest` tokens.
int max_sentinels(int longest, const SpanCorruption& c);

struct CorruptedChunk {
  std::vector<int> input;   // non-noise tokens, a sentinel per span, then </s>
  std::vector<int> target;  // sentinel_0 span_0 sentinel_1 span_1 ... (the decoder adds </s>)
};

// Applies a mask (of tokens.size()) to the tokens.
CorruptedChunk apply_noise_mask(std::span<const int> tokens, const std::vector<bool>& mask, int first_sentinel);
// A new draw of the mask, applied.
CorruptedChunk corrupt_spans(std::span<const int> tokens, const SpanCorruption& c, int first_sentinel, Rng& rng);

// Text lines' tokens packed into chunks of up to `length` tokens: whole lines while they fit, a
// longer line cut into pieces of `length`. Empty lines are left out.
std::vector<std::vector<int>> pack_chunks(const std::vector<std::vector<int>>& lines, int length);

}  // namespace potop
