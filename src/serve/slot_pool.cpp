#include "serve/slot_pool.h"

#include "core/error.h"
#include "serve/api_error.h"

namespace potop::serve {

SlotPool::SlotPool(int slots, int queue_size) : slots_(slots), free_(slots), queue_size_(queue_size) {
  POTOP_CHECK(slots >= 1 && queue_size >= 0);
}

std::unique_ptr<SlotPool::Lease> SlotPool::acquire(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  if (free_ == 0 && waiting_ >= queue_size_)
    throw ApiError(503, "server_busy", "",
                   "the server is busy: " +
                       (slots_ == 1 ? std::string("a request is being answered")
                                    : "all " + std::to_string(slots_) + " slots are generating") +
                       " and " + std::to_string(waiting_) + " requests are waiting (--queue); retry later");
  ++waiting_;
  const bool got = freed_.wait_until(lock, deadline, [&] { return free_ > 0; });
  --waiting_;
  if (!got) throw ApiError(503, "server_busy", "", "no slot became free within the request's time limit; retry later");
  --free_;
  return std::make_unique<Lease>(*this);
}

void SlotPool::release() {
  {
    std::lock_guard lock(mutex_);
    ++free_;
  }
  freed_.notify_one();
}

int SlotPool::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_;
}

int SlotPool::busy() const {
  std::lock_guard lock(mutex_);
  return slots_ - free_;
}

}  // namespace potop::serve
