// Continuous batching: one thread runs the model for every generation in progress. Each step it
// reads a chunk of every new (or re-read) prompt, each with its own forward pass, so that new
// requests get their first token before older ones continue; then every sequence that is
// decoding takes its next token in ONE forward pass (CausalLM::forward_rows: a row per sequence, each
// with its own KV cache and position). Requests join at the next step and leave when done or
// cancelled. Sampling stays per request (its Completion: seed, options, stop strings, log-probs),
// and a row's arithmetic does not depend on the other rows (tests/unit/serve/test_batcher.cpp).
//
// A request's tokens reach its HTTP handler thread through its Ticket, so a slow client never
// stalls the batch: the batcher only queues chunks; the handler writes them.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nn/tasks.h"
#include "serve/completion.h"

namespace potop::serve {

// One request in the batch, shared by its handler and the batcher.
struct Ticket {
  // Set by the handler before submit(): the completion, its on_chunk calling ticket.push.
  std::unique_ptr<Completion> completion;
  std::atomic<bool> cancelled{false};  // the handler's client left: the batcher drops it

  // Filled by the batcher; the handler waits for them.
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<CompletionChunk> chunks;
  bool finished = false;
  CompletionResult result;
  std::string error;  // a failure of ours (the handler answers 500 or ends the stream)

  bool push(const CompletionChunk& chunk);  // from on_chunk: false once cancelled
};

class Batcher {
 public:
  // model is the caller's and is used only by the batcher's thread, with `threads` OpenMP
  // threads; prompts are read at most prefill_chunk tokens per forward pass.
  Batcher(CausalLM& model, int threads, int prefill_chunk);
  ~Batcher();  // finishes what is running, then stops the thread
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  void submit(std::shared_ptr<Ticket> ticket);
  int active() const;  // generations in the batch or about to join it

 private:
  void run();
  void step(std::vector<std::shared_ptr<Ticket>>& batch);

  CausalLM& model_;
  int threads_, prefill_chunk_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<std::shared_ptr<Ticket>> incoming_;
  int active_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace potop::serve
