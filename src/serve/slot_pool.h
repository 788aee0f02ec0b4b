// The model slots that run generations side by side: each is a GPT replica (shared weights, its
// own activations; every generation also gets its own KV cache). A request waits for a free
// slot in a bounded queue; when the queue is full, or the wait outlasts the request's time
// limit, it is refused with 503 (ApiError) so the client can retry.
#pragma once
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "model/gpt.h"

namespace potop::serve {

class SlotPool {
 public:
  // slots replicas of model (which stays the caller's), queue_size requests may wait.
  SlotPool(GPT& model, int slots, int queue_size);

  class Lease {
   public:
    Lease(SlotPool& pool, GPT* model) : pool_(pool), model_(model) {}
    ~Lease() { pool_.release(model_); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    GPT& model() { return *model_; }

   private:
    SlotPool& pool_;
    GPT* model_;
  };
  // A free slot, waiting until `deadline` at most. Throws ApiError 503 when the queue is full or
  // the deadline passes.
  std::unique_ptr<Lease> acquire(std::chrono::steady_clock::time_point deadline);

  int waiting() const;
  int busy() const;
  int size() const { return static_cast<int>(all_.size()); }

 private:
  void release(GPT* model);

  std::vector<std::unique_ptr<GPT>> replicas_;  // all slots but the first, which is the caller's model
  std::vector<GPT*> all_, free_;
  int queue_size_, waiting_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
};

}  // namespace potop::serve
