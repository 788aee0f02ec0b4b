#include "serve/batcher.h"

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <exception>

#include "core/threads.h"

namespace potop::serve {

bool Ticket::push(const CompletionChunk& chunk) {
  if (cancelled) return false;
  {
    std::lock_guard lock(mutex);
    chunks.push_back(chunk);
  }
  changed.notify_all();
  return !cancelled;
}

Batcher::Batcher(CausalLM& model, int threads, int prefill_chunk)
    : model_(model), threads_(threads), prefill_chunk_(prefill_chunk), thread_([this] { run(); }) {}

Batcher::~Batcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  arrived_.notify_all();
  thread_.join();
}

void Batcher::submit(std::shared_ptr<Ticket> ticket) {
  {
    std::lock_guard lock(mutex_);
    incoming_.push_back(std::move(ticket));
    ++active_;
  }
  arrived_.notify_all();
}

int Batcher::active() const {
  std::lock_guard lock(mutex_);
  return active_;
}

void Batcher::run() {
  set_threads(threads_);
  std::vector<std::shared_ptr<Ticket>> batch;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (batch.empty()) {
        auto ready = [&] { return stopping_ || !incoming_.empty(); };
        if (!arrived_.wait_for(lock, std::chrono::seconds(1), ready)) {
          // Idle for a second: hand the free pages of finished requests back to the system, so
          // that the resident size follows the load rather than its peak.
          lock.unlock();
          malloc_trim(0);
          lock.lock();
          arrived_.wait(lock, ready);
        }
      }
      if (stopping_ && incoming_.empty() && batch.empty()) return;
      for (auto& t : incoming_) batch.push_back(std::move(t));
      incoming_.clear();
    }
    try {
      step(batch);
    } catch (const std::exception& e) {  // a bug of ours: fail the batch, keep serving
      std::fprintf(stderr, "serve: generation failed: %s\n", e.what());
      {
        std::lock_guard lock(mutex_);
        active_ -= static_cast<int>(batch.size());
      }
      for (auto& t : batch) {
        std::lock_guard lock(t->mutex);
        t->error = e.what();
        t->finished = true;
        t->changed.notify_all();
      }
      batch.clear();
      continue;
    }
    // Those that are done leave the batch (and active() counts them out before their handlers hear).
    for (auto& t : batch) {
      if (!t->completion->generation().done()) continue;
      CompletionResult result = t->completion->finish();
      {
        std::lock_guard lock(mutex_);
        --active_;
      }
      {
        std::lock_guard lock(t->mutex);
        t->result = std::move(result);
        t->finished = true;
      }
      t->changed.notify_all();
      t.reset();
    }
    std::erase(batch, nullptr);
  }
}

void Batcher::step(std::vector<std::shared_ptr<Ticket>>& batch) {
  for (auto& t : batch)
    if (t->cancelled && !t->completion->generation().done()) t->completion->cancel();
  // Prompts first, a chunk each: a new request's first token comes before the others' next.
  for (auto& t : batch) {
    Generation& g = t->completion->generation();
    if (g.done() || g.decoding()) continue;
    const std::span<const int> feed = g.pending();
    model_.forward(feed.data(), static_cast<int>(feed.size()), g.cache(), g.logit_rows());
    g.advance(model_.logits());
  }
  // Then one token for every decoding sequence, all in one forward pass.
  std::vector<Generation*> rows;
  std::vector<int> tokens;
  std::vector<KVCache*> caches;
  for (auto& t : batch) {
    Generation& g = t->completion->generation();
    if (!g.decoding()) continue;
    rows.push_back(&g);
    tokens.push_back(g.pending()[0]);
    caches.push_back(&g.cache());
  }
  if (rows.empty()) return;
  model_.forward_rows(tokens.data(), static_cast<int>(rows.size()), caches.data());
  const int V = model_.vocab_size();
  for (size_t b = 0; b < rows.size(); ++b) rows[b]->advance(model_.logits() + b * V);
}

}  // namespace potop::serve
