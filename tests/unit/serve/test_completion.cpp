// One completion on a small random model: the same seed gives the same text, log-probs have the
// legacy shape and are the model's, echo scores the prompt, stop strings end the text, and a
// client that leaves stops the generation.
#include <gtest/gtest.h>


#include <chrono>
#include <span>
#include <cmath>

#include "models/gpt/gpt.h"
#include "serve/api_error.h"
#include "serve/completion.h"
#include "tokenizer/char_tokenizer.h"

namespace potop::serve::test_completion {
namespace {

struct Fixture {
  Fixture() : tokenizer(CharTokenizer::from_text(U"abcdeł \n")), model(config()) { model.init_weights(7); }
  GPTConfig config() const {
    GPTConfig c;
    c.vocab_size = tokenizer.size(), c.block_size = 16, c.n_layer = 2, c.n_head = 2, c.n_embd = 16;
    return c;
  }
  CompletionResult run(const CompletionRequest& r, uint64_t seed,
                       const std::function<bool(const CompletionChunk&)>& on_chunk = {}) {
    const auto ids = encode_prompt(tokenizer, r, Limits{});
    return complete(model, tokenizer, r, ids, seed, std::chrono::steady_clock::now() + std::chrono::hours(1), on_chunk);
  }
  CharTokenizer tokenizer;
  GPT model;
};

CompletionRequest request(const std::string& prompt, int max_tokens) {
  CompletionRequest r;
  r.prompt = prompt;
  r.max_tokens = max_tokens;
  r.sampling.temperature = 1.0f;
  return r;
}

TEST(Completion, SameSeedSameText) {
  Fixture f;
  const auto r = request("abc", 40);
  const auto a = f.run(r, 11), b = f.run(r, 11), c = f.run(r, 12);
  EXPECT_EQ(a.text, b.text);
  EXPECT_NE(a.text, c.text);
  EXPECT_EQ(a.completion_tokens, 40);
  EXPECT_EQ(a.prompt_tokens, 3);
  EXPECT_EQ(a.finish_reason, "length");
}

TEST(Completion, LogprobsAreTheModelsAndAddUp) {
  Fixture f;
  auto r = request("ab", 5);
  r.logprobs = 3;
  const auto out = f.run(r, 1);
  ASSERT_EQ(out.scores.size(), 5u);
  std::string joined;
  long offset = 2;  // after the prompt's two characters
  for (const TokenScore& s : out.scores) {
    ASSERT_TRUE(s.logprob.has_value());
    EXPECT_LE(*s.logprob, 0.0f);
    ASSERT_EQ(s.top.size(), 3u);
    EXPECT_GE(s.top[0].second, s.top[1].second);
    EXPECT_LE(*s.logprob, s.top[0].second + 1e-6f);
    EXPECT_EQ(s.text_offset, offset);
    offset += 1;
    joined += s.text;
  }
  EXPECT_EQ(joined, out.text);
}

TEST(Completion, EchoScoresThePrompt) {
  Fixture f;
  auto r = request("abcł", 0);
  r.echo = true;
  r.logprobs = 1;
  const auto out = f.run(r, 1);
  EXPECT_EQ(out.text, "abcł");
  ASSERT_EQ(out.scores.size(), 4u);
  EXPECT_FALSE(out.scores[0].logprob.has_value());  // nothing predicts the first token
  for (size_t i = 1; i < 4; ++i) ASSERT_TRUE(out.scores[i].logprob.has_value());
  EXPECT_EQ(out.scores[3].text, "ł");
  EXPECT_EQ(out.scores[3].text_offset, 3);

  // The prompt's log-probs are what generation sees: scoring "ab" + the greedy next token gives
  // that token the log-prob generation reported.
  auto g = request("ab", 1);
  g.sampling.temperature = 0;
  g.logprobs = 0;
  const auto next = f.run(g, 1);
  auto e = request("ab" + next.text, 0);
  e.echo = true;
  e.logprobs = 0;
  const auto scored = f.run(e, 1);
  ASSERT_EQ(scored.scores.size(), 3u);
  EXPECT_NEAR(*scored.scores[2].logprob, *next.scores[0].logprob, 1e-5);
}

// A prompt longer than the context (16) is scored through generation's sliding window: position
// p sees the tokens from the window's start, which moves by half a block each time it fills.
TEST(Completion, EchoWithLogprobsScoresALongPromptThroughTheSlidingWindow) {
  Fixture f;
  const std::string text = "abcabdacbdabccbadcbabdcabdcbdacbdacbdabcdabcab";  // 46 characters
  auto scored = [&](const std::string& prompt, int prefill_chunk) {
    auto r = request(prompt, 0);
    r.echo = true;
    r.logprobs = 1;
    const auto ids = encode_prompt(f.tokenizer, r, Limits{});
    Completion c(f.model, f.tokenizer, r, ids, 1, std::chrono::steady_clock::now() + std::chrono::hours(1), {},
                 prefill_chunk);
    Generation& g = c.generation();
    while (!g.done()) {
      const std::span<const int> feed = g.pending();
      f.model.forward(feed.data(), static_cast<int>(feed.size()), g.cache(), g.logit_rows());
      g.advance(f.model.logits());
    }
    return c.finish().scores;
  };
  const auto whole = scored(text, 0);
  ASSERT_EQ(whole.size(), text.size());
  EXPECT_FALSE(whole[0].logprob.has_value());
  // Windows: [0, 16), then [8, 24), [16, 32), [24, 40), [32, 46). Token p is scored by position
  // q = p - 1, whose window starts at 0, or past the first at 8 * floor((q - 16) / 8) + 8.
  for (const int p : {5, 15, 16, 20, 23, 24, 25, 31, 40, 45}) {
    const int q = p - 1;
    const size_t start = q < 16 ? 0 : size_t(8 * ((q - 16) / 8) + 8);
    const auto alone = scored(text.substr(start, size_t(p) + 1 - start), 0);
    ASSERT_TRUE(whole[size_t(p)].logprob.has_value()) << p;
    EXPECT_NEAR(*whole[size_t(p)].logprob, *alone.back().logprob, 1e-5) << "position " << p;
    EXPECT_EQ(whole[size_t(p)].text_offset, p);
  }
  const auto chunked = scored(text, 5);  // read 5 tokens a pass, as the server's batcher does
  ASSERT_EQ(chunked.size(), whole.size());
  for (size_t p = 1; p < whole.size(); ++p) EXPECT_NEAR(*chunked[p].logprob, *whole[p].logprob, 1e-5) << p;
}

TEST(Completion, UnencodablePromptIsAClientError) {
  Fixture f;
  try {
    encode_prompt(f.tokenizer, request("abcЖ", 1), Limits{});
    FAIL() << "accepted a character outside the vocabulary";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "prompt");
  }
}

TEST(Completion, StopStringEndsTheTextAndIsNotShown) {
  Fixture f;
  auto r = request("a", 60);
  const auto free_run = f.run(r, 3);
  // Stop at a character the free run produced: the text is the free run cut just before it.
  const std::string stop = free_run.text.substr(10, 1);
  r.stop = {stop};
  std::string streamed;
  const auto out = f.run(r, 3, [&](const CompletionChunk& c) {
    streamed += c.text;
    return true;
  });
  EXPECT_EQ(out.finish_reason, "stop");
  EXPECT_EQ(out.text, free_run.text.substr(0, free_run.text.find(stop)));
  EXPECT_EQ(streamed, out.text);
}

TEST(Completion, ClientLeavingCancels) {
  Fixture f;
  int chunks = 0;
  const auto out = f.run(request("a", 50), 3, [&](const CompletionChunk&) { return ++chunks < 5; });
  EXPECT_TRUE(out.cancelled);
  EXPECT_EQ(out.completion_tokens, 5);
}

}  // namespace
}  // namespace potop::serve::test_completion
