#include "data/span_corruption.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace potop {

namespace {

struct Counts {
  int noise, spans;
};

// T5's rounding is round-half-to-even (tf.round); std::nearbyint rounds so in the default mode.
Counts counts(int length, const SpanCorruption& c) {
  length = std::max(length, 2);
  int noise = int(std::nearbyint(double(length) * c.noise_density));
  noise = std::min(std::max(noise, 1), length - 1);
  int spans = std::max(int(std::nearbyint(double(noise) / c.mean_span)), 1);
  // (T5 leaves this out; it only matters when noise outweighs the rest, density > 0.5.)
  spans = std::min(spans, length - noise);
  return {noise, spans};
}

// `items` split into `segments` positive lengths, every split equally likely: the segments'
// first items are item 0 and segments-1 of the other items-1, chosen without replacement
// (T5's shuffled indicator vector; here a partial Fisher-Yates draw of the same distribution).
std::vector<int> random_segmentation(int items, int segments, Rng& rng) {
  POTOP_CHECK(segments >= 1 && segments <= items, "random_segmentation: bad counts");
  std::vector<int> starts(size_t(items - 1));
  for (int i = 0; i < items - 1; ++i) starts[size_t(i)] = i + 1;
  rng.shuffle_first(starts, uint64_t(segments - 1));
  starts.resize(size_t(segments - 1));
  std::sort(starts.begin(), starts.end());
  std::vector<int> lengths;
  int previous = 0;
  for (int s : starts) lengths.push_back(s - previous), previous = s;
  lengths.push_back(items - previous);
  return lengths;
}

}  // namespace

int noise_spans(int length, const SpanCorruption& c) { return counts(length, c).spans; }

int max_sentinels(int longest, const SpanCorruption& c) {
  int most = 1;
  for (int l = 1; l <= longest; ++l) most = std::max(most, noise_spans(l, c));
  return most;
}

std::vector<bool> random_spans_noise_mask(int length, const SpanCorruption& c, Rng& rng) {
  const int original = length;
  length = std::max(length, 2);
  const Counts n = counts(length, c);
  const std::vector<int> noise = random_segmentation(n.noise, n.spans, rng);
  const std::vector<int> kept = random_segmentation(length - n.noise, n.spans, rng);
  std::vector<bool> mask;
  mask.reserve(size_t(length));
  for (int s = 0; s < n.spans; ++s) {  // non-noise first, then noise
    mask.insert(mask.end(), size_t(kept[size_t(s)]), false);
    mask.insert(mask.end(), size_t(noise[size_t(s)]), true);
  }
  mask.resize(size_t(original));
  return mask;
}

CorruptedChunk apply_noise_mask(std::span<const int> tokens, const std::vector<bool>& mask, int first_sentinel) {
  POTOP_CHECK(mask.size() == tokens.size(), "apply_noise_mask: the mask's length is not the tokens'");
  CorruptedChunk out;
  int sentinel = first_sentinel;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!mask[i]) {
      out.input.push_back(tokens[i]);
      continue;
    }
    if (i == 0 || !mask[i - 1]) {  // a span starts: one sentinel in both
      out.input.push_back(sentinel);
      out.target.push_back(sentinel++);
    }
    out.target.push_back(tokens[i]);
  }
  out.input.push_back(kEosId);
  return out;
}

CorruptedChunk corrupt_spans(std::span<const int> tokens, const SpanCorruption& c, int first_sentinel, Rng& rng) {
  return apply_noise_mask(tokens, random_spans_noise_mask(int(tokens.size()), c, rng), first_sentinel);
}

std::vector<std::vector<int>> pack_chunks(const std::vector<std::vector<int>>& lines, int length) {
  POTOP_CHECK(length >= 1, "pack_chunks: length < 1");
  std::vector<std::vector<int>> chunks;
  std::vector<int> current;
  auto flush = [&] {
    if (!current.empty()) chunks.push_back(std::move(current));
    current.clear();
  };
  for (const std::vector<int>& line : lines) {
    if (line.empty()) continue;
    if (current.size() + line.size() > size_t(length)) flush();
    for (size_t i = 0; i < line.size(); i += size_t(length)) {
      const size_t n = std::min(size_t(length), line.size() - i);
      if (n == size_t(length)) {
        chunks.emplace_back(line.begin() + long(i), line.begin() + long(i + n));
      } else {
        current.insert(current.end(), line.begin() + long(i), line.begin() + long(i + n));
      }
    }
  }
  flush();
  return chunks;
}

}  // namespace potop
