// The encoder-decoder's generation path and masks: KV-cached decoding gives the logits of the
// full teacher-forced pass; padding after a source's length changes nothing; beam search with
// beam 1 is greedy search; beam search advancing its hypotheses in one batched pass finds what
// one pass per hypothesis finds; sentences searched together find what each finds alone;
// Batch::rows shards the source side; a pairs file's --columns name the model's two languages,
// two and no more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "models/encoder_decoder/translation_model.h"
#include "models/encoder_decoder/translator.h"
#include "models/encoder_decoder/encoder_decoder.h"
#include "tokenizer/tokenizer.h"

namespace potop {
namespace {

EncoderDecoderConfig tiny(NormPlacement norm) {
  EncoderDecoderConfig c;
  c.vocab_size = 23, c.block_size = 16, c.n_layer = 2, c.n_head = 2, c.n_embd = 16, c.dropout = 0.0f;
  c.norm = norm;
  return c;
}

// Weights far from the init's near-uniform attention, so that masks and caches matter.
void scramble(EncoderDecoder& model, uint64_t seed) {
  model.init_weights(seed);
  const ParameterSet& params = model.parameters();
  for (const TensorSpec& spec : params.layout().specs()) {
    float* w = params.values().at(spec);
    if (spec.init.kind == TensorInit::Kind::kNormal && spec.name != "wte.weight")
      for (size_t i = 0; i < spec.numel; ++i) w[i] *= 10.0f;
  }
}

std::vector<int> random_ids(Rng& rng, int n, int V) {
  std::vector<int> ids(n);
  for (int& id : ids) id = 4 + int(rng.below(uint64_t(V - 4)));
  return ids;
}

double max_diff(const float* a, const float* b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
  return m;
}

TEST(EncoderDecoder, CachedDecodingMatchesTheFullPass) {
  for (NormPlacement norm : {NormPlacement::kPost, NormPlacement::kPre}) {
    EncoderDecoder model(tiny(norm));
    scramble(model, 3);
    Rng rng(5);
    const int S = 7, T = 6, V = model.config().vocab_size;
    const std::vector<int> source = random_ids(rng, S, V), tokens = random_ids(rng, T, V);
    Batch batch;
    batch.B = 1, batch.T = T, batch.S = S, batch.tokens = tokens.data(), batch.source = source.data();
    model.forward(batch, Pass{});
    const std::vector<float> full(model.logits(), model.logits() + size_t(T) * V);
    model.encode(source.data(), S);
    KVCache cache = model.new_cache();
    for (int t = 0; t < T; ++t) {
      const float* step = model.decode(&tokens[t], 1, cache);
      EXPECT_LT(max_diff(step, full.data() + size_t(t) * V, V), 1e-4) << "position " << t;
    }
  }
}

TEST(EncoderDecoder, SourcePaddingChangesNothing) {
  EncoderDecoder model(tiny(NormPlacement::kPost));
  scramble(model, 4);
  Rng rng(6);
  const int S = 5, V = model.config().vocab_size, T = 4;
  const std::vector<int> source = random_ids(rng, S, V), tokens = random_ids(rng, T, V);
  std::vector<int> targets = random_ids(rng, T, V);
  // Row 0: the source alone. Row 1: the same source followed by 4 pad positions of junk.
  const int P = S + 4;
  std::vector<int> padded(2 * size_t(P), 0), lengths{S, S}, input(2 * size_t(T)), tgt(2 * size_t(T));
  for (int b = 0; b < 2; ++b) {
    for (int s = 0; s < P; ++s) padded[b * P + s] = s < S ? source[s] : 4 + (s * 7 + b) % (V - 4);
    for (int t = 0; t < T; ++t) input[b * T + t] = tokens[t], tgt[b * T + t] = targets[t];
  }
  Batch batch;
  batch.B = 2, batch.T = T, batch.S = P, batch.tokens = input.data(), batch.targets = tgt.data();
  batch.source = padded.data(), batch.source_lengths = lengths.data();
  model.forward(batch, Pass{});
  const std::vector<float> both(model.logits(), model.logits() + size_t(2) * T * V);
  Batch alone;
  alone.B = 1, alone.T = T, alone.S = S, alone.tokens = tokens.data(), alone.targets = targets.data();
  alone.source = source.data();
  model.forward(alone, Pass{});
  EXPECT_LT(max_diff(both.data(), model.logits(), size_t(T) * V), 1e-4);
  EXPECT_LT(max_diff(both.data() + size_t(T) * V, model.logits(), size_t(T) * V), 1e-4);
}

TEST(EncoderDecoder, BeamOneIsGreedy) {
  EncoderDecoder model(tiny(NormPlacement::kPost));
  scramble(model, 8);
  Rng rng(9);
  const int V = model.config().vocab_size;
  int nonempty = 0;
  for (int i = 0; i < 12; ++i) {
    std::vector<int> source = random_ids(rng, 2 + i % 6, V);
    source.push_back(kEosId);
    const DecodeOptions one{1, 0.6f, 6};
    const std::vector<int> greedy = greedy_search(model, source, one);
    EXPECT_EQ(beam_search(model, source, one), greedy) << "source " << i;
    nonempty += !greedy.empty();
    // A wider beam returns something within the length limit.
    const std::vector<int> wide = beam_search(model, source, DecodeOptions{4, 0.6f, 6});
    EXPECT_LE(wide.size(), source.size() + 7);
  }
  EXPECT_GT(nonempty, 0) << "every greedy translation was empty: the test compared nothing";
}

// decode_rows advances several hypotheses, each with its own cache and history, in one pass:
// row b matches decode() of that hypothesis alone.
TEST(EncoderDecoder, DecodeRowsMatchesOneHypothesisAtATime) {
  EncoderDecoder model(tiny(NormPlacement::kPre));
  scramble(model, 5);
  Rng rng(6);
  const int V = model.config().vocab_size, B = 3;
  std::vector<int> source = random_ids(rng, 5, V);
  source.push_back(kEosId);
  model.encode(source.data(), int(source.size()));
  std::vector<KVCache> batched, single;
  for (int b = 0; b < B; ++b) batched.push_back(model.new_cache()), single.push_back(model.new_cache());
  std::vector<KVCache*> row_caches;
  for (KVCache& c : batched) row_caches.push_back(&c);
  for (int step = 0; step < 4; ++step) {
    const std::vector<int> tokens = random_ids(rng, B, V);  // a different history per row
    const float* rows = model.decode_rows(tokens.data(), B, row_caches.data());
    const std::vector<float> logits(rows, rows + size_t(B) * V);
    for (int b = 0; b < B; ++b) {
      const float* one = model.decode(&tokens[b], 1, single[b]);
      EXPECT_LT(max_diff(logits.data() + size_t(b) * V, one, V), 1e-4) << "step " << step << " row " << b;
    }
  }
}

// The batched beam (all K hypotheses in one decoder pass) returns exactly what the beam with one
// pass per hypothesis returns, for beams 1..5, both norm placements; beam 1 is still greedy.
TEST(EncoderDecoder, BatchedBeamSearchMatchesOnePassPerHypothesis) {
  for (NormPlacement norm : {NormPlacement::kPost, NormPlacement::kPre}) {
    EncoderDecoder model(tiny(norm));
    scramble(model, 11);
    Rng rng(12);
    const int V = model.config().vocab_size;
    int differs_from_greedy = 0;
    for (int i = 0; i < 10; ++i) {
      std::vector<int> source = random_ids(rng, 2 + i % 6, V);
      source.push_back(kEosId);
      const std::vector<int> greedy = greedy_search(model, source, DecodeOptions{1, 0.6f, 6});
      for (int beam = 1; beam <= 5; ++beam) {
        DecodeOptions batched{beam, 0.6f, 6}, reference = batched;
        reference.batched = false;
        const std::vector<int> got = beam_search(model, source, batched);
        EXPECT_EQ(got, beam_search(model, source, reference)) << "source " << i << ", beam " << beam;
        if (beam == 1) {
          EXPECT_EQ(got, greedy) << "source " << i;
        }
        differs_from_greedy += got != greedy;
      }
    }
    EXPECT_GT(differs_from_greedy, 0) << "no beam ever differed from greedy: the test compared too little";
  }
}

// Rows of different sentences (different source lengths, different histories) in one
// decode_rows pass: each row matches decode() of its hypothesis with its own sentence encoded.
TEST(EncoderDecoder, DecodeRowsMixesSentences) {
  EncoderDecoder model(tiny(NormPlacement::kPost));
  scramble(model, 13);
  Rng rng(14);
  const int V = model.config().vocab_size, B = 3;
  std::vector<std::vector<int>> sources;
  std::vector<MemoryKV> memories;
  for (int b = 0; b < B; ++b) {
    sources.push_back(random_ids(rng, 3 + 4 * b, V));
    sources.back().push_back(kEosId);
    memories.push_back(model.encode_source(sources[b].data(), int(sources[b].size())));
  }
  std::vector<KVCache> batched, single;
  for (int b = 0; b < B; ++b) batched.push_back(model.new_cache()), single.push_back(model.new_cache());
  std::vector<KVCache*> row_caches;
  std::vector<const MemoryKV*> row_sources;
  for (int b = 0; b < B; ++b) row_caches.push_back(&batched[b]), row_sources.push_back(&memories[b]);
  for (int step = 0; step < 4; ++step) {
    const std::vector<int> tokens = random_ids(rng, B, V);
    const float* rows = model.decode_rows(tokens.data(), B, row_caches.data(), row_sources.data());
    const std::vector<float> logits(rows, rows + size_t(B) * V);
    for (int b = 0; b < B; ++b) {
      model.encode(sources[b].data(), int(sources[b].size()));
      const float* one = model.decode(&tokens[b], 1, single[b]);
      EXPECT_LT(max_diff(logits.data() + size_t(b) * V, one, V), 1e-4) << "step " << step << " row " << b;
    }
  }
}

// Several sentences searched together (translate_batch: every alive hypothesis of every
// unfinished sentence in one pass a step, finished sentences leaving the batch) give exactly the
// translations of one sentence at a time, in order: greedy and beam 4, post- and pre-LN.
TEST(EncoderDecoder, TranslateBatchMatchesOneSentenceAtATime) {
  for (NormPlacement norm : {NormPlacement::kPost, NormPlacement::kPre}) {
    EncoderDecoder model(tiny(norm));
    scramble(model, 11);
    Rng rng(16);
    const int V = model.config().vocab_size;
    std::vector<std::vector<int>> sources;
    for (int i = 0; i < 9; ++i) {
      sources.push_back(random_ids(rng, 1 + (i * 5) % 9, V));  // 1 to 9 tokens, mixed order
      sources.back().push_back(kEosId);
    }
    for (int beam : {1, 4}) {
      const DecodeOptions options{beam, 0.6f, 6};
      const std::vector<std::vector<int>> together = translate_batch(model, sources, options);
      ASSERT_EQ(together.size(), sources.size());
      std::vector<size_t> lengths;
      for (size_t i = 0; i < sources.size(); ++i) {
        EXPECT_EQ(together[i], translate_ids(model, sources[i], options)) << "sentence " << i << ", beam " << beam;
        lengths.push_back(together[i].size());
      }
      // Sentences ended at different steps, so the batch shrank while others went on.
      EXPECT_GT(*std::max_element(lengths.begin(), lengths.end()), *std::min_element(lengths.begin(), lengths.end()))
          << "beam " << beam << ": every translation had the same length; the test compared too little";
      // A batch of one and an empty batch.
      EXPECT_EQ(translate_batch(model, std::span(sources).first(1), options)[0], together[0]);
      EXPECT_TRUE(translate_batch(model, std::span(sources).first(0), options).empty());
    }
  }
}

TEST(EncoderDecoder, BatchRowsShardTheSource) {
  std::vector<int> tokens(6), source(9), lengths{3, 2, 1};
  Batch b;
  b.B = 3, b.T = 2, b.S = 3, b.tokens = tokens.data(), b.source = source.data(), b.source_lengths = lengths.data();
  const Batch shard = b.rows(1, 2);
  EXPECT_EQ(shard.B, 2);
  EXPECT_EQ(shard.source, source.data() + 3);
  EXPECT_EQ(shard.source_lengths, lengths.data() + 1);
  EXPECT_EQ(shard.tokens, tokens.data() + 2);
}

TEST(EncoderDecoder, ColumnsOfAnEvaluationAreTheModelsTwoLanguages) {
  TranslationModel m;
  m.source = "a", m.target = "b", m.training = {{"columns", "b,a"}};
  EXPECT_TRUE(source_is_first_column(m, "a,b", "d.tsv"));
  EXPECT_FALSE(source_is_first_column(m, "b,a", "d.tsv"));
  EXPECT_FALSE(source_is_first_column(m, "", "d.tsv")) << "the columns of its training data";
  EXPECT_THROW(source_is_first_column(m, "a,c", "d.tsv"), Error);
  EXPECT_THROW(source_is_first_column(m, "ab", "d.tsv"), Error);
  try {
    source_is_first_column(m, "a,b,c", "d.tsv");
    ADD_FAILURE() << "a third column must be refused, as translate train refuses it";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--columns a,b,c: expected two languages, like en,pl");
  }
}

}  // namespace
}  // namespace potop
