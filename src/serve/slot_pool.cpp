#include "serve/slot_pool.h"

#include "core/error.h"
#include "serve/api_error.h"

namespace potop::serve {

SlotPool::SlotPool(GPT& model, int slots, int queue_size) : queue_size_(queue_size) {
  POTOP_CHECK(slots >= 1 && queue_size >= 0);
  all_.push_back(&model);
  for (int i = 1; i < slots; ++i) {
    std::unique_ptr<Model> copy = model.replica();
    replicas_.emplace_back(static_cast<GPT*>(copy.release()));
    all_.push_back(replicas_.back().get());
  }
  free_ = all_;
}

std::unique_ptr<SlotPool::Lease> SlotPool::acquire(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  if (free_.empty() && waiting_ >= queue_size_)
    throw ApiError(503, "server_busy", "",
                   "the server is busy: all " + std::to_string(all_.size()) + " slots are generating and " +
                       std::to_string(waiting_) + " requests are waiting; retry later");
  ++waiting_;
  const bool got = freed_.wait_until(lock, deadline, [&] { return !free_.empty(); });
  --waiting_;
  if (!got) throw ApiError(503, "server_busy", "", "no slot became free within the request's time limit; retry later");
  GPT* model = free_.back();
  free_.pop_back();
  return std::make_unique<Lease>(*this, model);
}

void SlotPool::release(GPT* model) {
  {
    std::lock_guard lock(mutex_);
    free_.push_back(model);
  }
  freed_.notify_one();
}

int SlotPool::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_;
}

int SlotPool::busy() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(all_.size() - free_.size());
}

}  // namespace potop::serve
