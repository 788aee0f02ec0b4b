// The batcher (continuous batching) on a small random model: a seeded request gives the same text
// and log-probs alone, alongside three others, and through complete() (one sequence, no batch);
// prompts read in chunks score like prompts read whole; a cancelled request leaves the batch
// while the others finish.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "models/gpt/gpt.h"
#include "serve/batcher.h"
#include "tokenizer/char_tokenizer.h"

namespace potop::serve {
namespace {

struct Fixture {
  Fixture() : tokenizer(CharTokenizer::from_text(U"abcdeł \n")), model(config()) { model.init_weights(7); }
  GPTConfig config() const {
    GPTConfig c;
    c.vocab_size = tokenizer.size(), c.block_size = 16, c.n_layer = 2, c.n_head = 2, c.n_embd = 16;
    return c;
  }
  std::chrono::steady_clock::time_point later() const { return std::chrono::steady_clock::now() + std::chrono::hours(1); }
  std::shared_ptr<Ticket> ticket(const CompletionRequest& r, uint64_t seed, int prefill_chunk) {
    auto t = std::make_shared<Ticket>();
    Ticket* raw = t.get();
    const auto ids = encode_prompt(tokenizer, r, Limits{});
    t->completion = std::make_unique<Completion>(model, tokenizer, r, ids, seed, later(),
                                                 [raw](const CompletionChunk& c) { return raw->push(c); }, prefill_chunk);
    return t;
  }
  // Runs the requests in one batcher, all submitted at once.
  std::vector<CompletionResult> batch(const std::vector<CompletionRequest>& requests, const std::vector<uint64_t>& seeds,
                                      int prefill_chunk = 64) {
    std::vector<std::shared_ptr<Ticket>> tickets;
    for (size_t i = 0; i < requests.size(); ++i) tickets.push_back(ticket(requests[i], seeds[i], prefill_chunk));
    {
      Batcher batcher(model, 1, prefill_chunk);
      for (auto& t : tickets) batcher.submit(t);
      for (auto& t : tickets) wait(*t);
    }
    std::vector<CompletionResult> out;
    for (auto& t : tickets) {
      EXPECT_EQ(t->error, "");
      out.push_back(t->result);
    }
    return out;
  }
  static void wait(Ticket& t) {
    std::unique_lock lock(t.mutex);
    t.changed.wait(lock, [&] { return t.finished; });
  }
  CharTokenizer tokenizer;
  GPT model;
};

CompletionRequest request(const std::string& prompt, int max_tokens, float temperature = 1.0f) {
  CompletionRequest r;
  r.prompt = prompt;
  r.max_tokens = max_tokens;
  r.sampling.temperature = temperature;
  return r;
}

void expect_same(const CompletionResult& a, const CompletionResult& b) {
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.completion_tokens, b.completion_tokens);
  EXPECT_EQ(a.finish_reason, b.finish_reason);
  ASSERT_EQ(a.scores.size(), b.scores.size());
  for (size_t i = 0; i < a.scores.size(); ++i) {
    EXPECT_EQ(a.scores[i].text, b.scores[i].text);
    ASSERT_EQ(a.scores[i].logprob.has_value(), b.scores[i].logprob.has_value());
    if (a.scores[i].logprob) {
      EXPECT_NEAR(*a.scores[i].logprob, *b.scores[i].logprob, 1e-5) << i;
    }
  }
}

TEST(Batcher, SeededRequestGivesTheSameTextAloneAndAlongsideOthers) {
  Fixture f;
  auto r = request("abc", 40);  // 40 tokens: the context passes block_size (16), the cache is re-read
  r.logprobs = 2;
  const auto alone = f.batch({r}, {11});
  EXPECT_EQ(alone[0].completion_tokens, 40);
  // Alongside three others of other lengths, prompts and options, started together.
  auto greedy = request("ł", 25, 0.0f);
  auto stopped = request("de", 30);
  stopped.stop = {"a"};
  const auto crowd = f.batch({request("bbbbbbbbbbbbbbbbbbbbbbbb", 7), r, greedy, stopped}, {1, 11, 2, 3});
  expect_same(alone[0], crowd[1]);
  // And as complete() generates it, one sequence with batch-1 forward passes.
  const auto ids = encode_prompt(f.tokenizer, r, Limits{});
  expect_same(alone[0], complete(f.model, f.tokenizer, r, ids, 11, f.later()));
  const auto greedy_ids = encode_prompt(f.tokenizer, greedy, Limits{});
  expect_same(crowd[2], complete(f.model, f.tokenizer, greedy, greedy_ids, 2, f.later()));
  const auto stopped_ids = encode_prompt(f.tokenizer, stopped, Limits{});
  expect_same(crowd[3], complete(f.model, f.tokenizer, stopped, stopped_ids, 3, f.later()));
  EXPECT_NE(crowd[1].text, crowd[0].text);
}

TEST(Batcher, ChunkedPromptScoresLikeAWholeOne) {
  Fixture f;
  auto r = request("abcdełabcdeł", 5);  // 12 tokens read 5 at a time
  r.echo = true;
  r.logprobs = 3;
  const auto chunked = f.batch({r}, {4}, 5);
  const auto ids = encode_prompt(f.tokenizer, r, Limits{});
  const auto whole = complete(f.model, f.tokenizer, r, ids, 4, f.later());
  ASSERT_EQ(chunked[0].scores.size(), 12u + 5u);
  expect_same(chunked[0], whole);
}

TEST(Batcher, CancelledRequestLeavesWhileOthersFinish) {
  Fixture f;
  auto cancelled = f.ticket(request("a", 100000), 1, 64);
  auto other = f.ticket(request("b", 50), 2, 64);
  Batcher batcher(f.model, 1, 64);
  batcher.submit(cancelled);
  batcher.submit(other);
  {
    std::unique_lock lock(cancelled->mutex);
    cancelled->changed.wait(lock, [&] { return !cancelled->chunks.empty(); });
  }
  cancelled->cancelled = true;
  Fixture::wait(*cancelled);
  Fixture::wait(*other);
  EXPECT_TRUE(cancelled->result.cancelled);
  EXPECT_LT(cancelled->result.completion_tokens, 100000);
  EXPECT_FALSE(other->result.cancelled);
  EXPECT_EQ(other->result.completion_tokens, 50);
  EXPECT_EQ(batcher.active(), 0);
}

}  // namespace
}  // namespace potop::serve
