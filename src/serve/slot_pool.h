// The places in the batch (serve/batcher.h): at most `slots` generations decode together, each
// with its own KV cache. A request waits for a free slot in a bounded queue; when the queue is
// full, or the wait outlasts the request's time limit, it is refused with 503 (ApiError) so the
// client can retry.
#pragma once
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace potop::serve {

class SlotPool {
 public:
  // slots generations at once, queue_size requests may wait.
  SlotPool(int slots, int queue_size);

  class Lease {
   public:
    explicit Lease(SlotPool& pool) : pool_(pool) {}
    ~Lease() { pool_.release(); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

   private:
    SlotPool& pool_;
  };
  // A free slot, waiting until `deadline` at most. Throws ApiError 503 when the queue is full or
  // the deadline passes.
  std::unique_ptr<Lease> acquire(std::chrono::steady_clock::time_point deadline);

  int waiting() const;
  int busy() const;
  int size() const { return slots_; }

 private:
  void release();

  int slots_, free_, queue_size_, waiting_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
};

}  // namespace potop::serve
