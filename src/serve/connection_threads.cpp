#include "serve/connection_threads.h"

#include <system_error>
#include <utility>

#include "core/error.h"

namespace potop::serve {

ConnectionThreads::ConnectionThreads(size_t max_threads) : max_threads_(max_threads) {
  POTOP_CHECK(max_threads >= 1);
}

ConnectionThreads::~ConnectionThreads() { shutdown(); }

bool ConnectionThreads::try_start(std::function<void()>& task) {
  const WorkerIt worker = workers_.emplace(workers_.end());
  worker->task = std::move(task);
  try {
    // The new thread waits for mutex_ (held here) before it touches `finished`, so assigning
    // `thread` now races with nothing.
    worker->thread = std::thread([this, worker] { work(worker); });
  } catch (const std::system_error&) {  // no thread to be had (EAGAIN): the caller keeps the task
    task = std::move(worker->task);
    workers_.erase(worker);
    return false;
  }
  ++running_;
  return true;
}

void ConnectionThreads::work(WorkerIt self) {
  std::function<void()> task = std::move(self->task);
  for (;;) {
    task();
    task = nullptr;  // what it captured is destroyed on this thread, before we count it done
    std::lock_guard lock(mutex_);
    if (!waiting_.empty()) {
      // The next connection gets a fresh thread, so that this one can exit and hand its cache back.
      std::function<void()> next = std::move(waiting_.front());
      waiting_.pop_front();
      if (!try_start(next)) {  // none to be had: serve it here rather than leave it waiting
        task = std::move(next);
        continue;
      }
    }
    --running_;
    self->finished = true;
    if (running_ == 0 && waiting_.empty()) all_done_.notify_all();
    return;
  }
}

std::list<ConnectionThreads::Worker> ConnectionThreads::take_finished() {
  std::list<Worker> finished;
  for (auto it = workers_.begin(); it != workers_.end();) {
    auto next = std::next(it);
    if (it->finished) finished.splice(finished.end(), workers_, it);
    it = next;
  }
  return finished;
}

void ConnectionThreads::enqueue(std::function<void()> task) {
  std::list<Worker> finished;
  bool run_here = false;
  {
    std::lock_guard lock(mutex_);
    finished = take_finished();
    if (running_ >= max_threads_) {
      waiting_.push_back(std::move(task));
    } else if (!try_start(task)) {
      // No thread to be had. With others running, one of them takes it when it is done;
      // with none, only this thread (httplib's accept loop) can serve it.
      if (running_ > 0) waiting_.push_back(std::move(task));
      else run_here = true;
    }
  }
  for (Worker& w : finished) w.thread.join();  // exited, or about to: they hold no lock
  if (run_here) task();
}

void ConnectionThreads::shutdown() {
  std::list<Worker> all;
  {
    std::unique_lock lock(mutex_);
    all_done_.wait(lock, [&] { return running_ == 0 && waiting_.empty(); });
    all.swap(workers_);
  }
  for (Worker& w : all) w.thread.join();
}

size_t ConnectionThreads::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

size_t ConnectionThreads::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_.size();
}

}  // namespace potop::serve
