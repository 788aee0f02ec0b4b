// A pre-trained encoder-decoder's vocabulary ends in span-corruption sentinels (ids past the
// tokenizer's, data/span_corruption.h): decoding — greedy, beam (batched and one pass per
// hypothesis), several sentences together — never emits one, even where the model favours them.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/rng.h"
#include "models/encoder_decoder/encoder_decoder.h"
#include "models/encoder_decoder/translator.h"

namespace potop {
namespace {

constexpr int kTokenizer = 20, kSentinels = 6;

// A model whose sentinel rows of the (tied) output table are large: left alone, most steps'
// argmax would be a sentinel.
EncoderDecoder favouring_sentinels(int sentinels) {
  EncoderDecoderConfig c;
  c.vocab_size = kTokenizer + kSentinels, c.sentinels = sentinels;
  c.block_size = 16, c.n_layer = 1, c.n_head = 2, c.n_embd = 16, c.dropout = 0.0f;
  EncoderDecoder model(c);
  model.init_weights(7);
  const ParameterSet& params = model.parameters();
  for (const TensorSpec& spec : params.layout().specs()) {
    if (spec.name != "wte.weight") continue;
    float* w = params.values().at(spec);
    for (size_t i = size_t(kTokenizer) * 16; i < spec.numel; ++i) w[i] *= 30.0f;
  }
  return model;
}

std::vector<std::vector<int>> translations(EncoderDecoder& model) {
  Rng rng(3);
  std::vector<std::vector<int>> sources;
  for (int n = 1; n <= 6; ++n) {
    std::vector<int> s;
    for (int i = 0; i < n; ++i) s.push_back(4 + int(rng.below(kTokenizer - 4)));
    s.push_back(2);  // </s>
    sources.push_back(s);
  }
  std::vector<std::vector<int>> out;
  for (int beam : {1, 3}) {
    for (bool batched : {true, false}) {
      DecodeOptions o;
      o.beam = beam, o.batched = batched;
      for (const std::vector<int>& s : sources) out.push_back(translate_ids(model, s, o));
    }
    DecodeOptions o;
    o.beam = beam;
    for (std::vector<int>& t : translate_batch(model, sources, o)) out.push_back(std::move(t));
  }
  return out;
}

int largest_id(const std::vector<std::vector<int>>& outs) {
  int m = -1;
  for (const std::vector<int>& t : outs)
    for (int id : t) m = std::max(m, id);
  return m;
}

TEST(SentinelDecoding, SentinelsAreNeverEmitted) {
  // Without the mask (the same weights read as a plain vocabulary), sentinels come out...
  EncoderDecoder plain = favouring_sentinels(0);
  EXPECT_GE(largest_id(translations(plain)), kTokenizer);
  // ...with it, none, whatever the search.
  EncoderDecoder pretrained = favouring_sentinels(kSentinels);
  const std::vector<std::vector<int>> outs = translations(pretrained);
  EXPECT_LT(largest_id(outs), kTokenizer);
  size_t tokens = 0;
  for (const std::vector<int>& t : outs) tokens += t.size();
  EXPECT_GT(tokens, 0u);  // (something was emitted at all)
}

}  // namespace
}  // namespace potop
