// The request threads of `potop serve` (serve/guarded_http_server.h hands each whole request to
// one): a task runs on a thread of its own, which exits when no task waits, with at most
// `max_threads` running at once; more wait, first come first served (as in httplib::ThreadPool,
// whose queue is unbounded too: refusals are the slot pool's 503, serve/slot_pool.h). It is an
// httplib::TaskQueue, and serves an httplib::Server as well.
//
// Why not httplib::ThreadPool: its threads live as long as the server, and glibc gives every
// thread a cache of freed blocks (tcache) that it never hands back while the thread lives.
// Under a long mixed load each of the ~90 handler threads filled its cache with blocks of more
// and more sizes, and the heap in use and RSS crept up for minutes (docs/serve.md, Memory). A
// thread that exits returns its cache to the arena, where it is reused or trimmed.
#pragma once
#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace potop::serve {

class ConnectionThreads : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(size_t max_threads);
  ~ConnectionThreads() override;  // shutdown()
  ConnectionThreads(const ConnectionThreads&) = delete;
  ConnectionThreads& operator=(const ConnectionThreads&) = delete;

  // Runs `task` on a new thread now, or once a running one finishes when max_threads are busy.
  void enqueue(std::function<void()> task) override;
  // Waits until every task given so far has run and every thread has exited. Idempotent.
  void shutdown() override;

  size_t running() const;  // tasks running now
  size_t waiting() const;  // tasks waiting for a thread

 private:
  struct Worker {
    std::function<void()> task;  // its first task, until the thread takes it
    std::thread thread;
    bool finished = false;  // its tasks are done and it touches nothing of ours any more
  };
  using WorkerIt = std::list<Worker>::iterator;

  // With mutex_ held and fewer than max_threads running: a thread for `task`. False (and `task`
  // left as it was) when the system gives no thread.
  bool try_start(std::function<void()>& task);
  void work(WorkerIt self);
  std::list<Worker> take_finished();  // with mutex_ held; the caller joins them unlocked

  const size_t max_threads_;
  mutable std::mutex mutex_;
  std::condition_variable all_done_;
  std::deque<std::function<void()>> waiting_;
  std::list<Worker> workers_;  // running, or finished and not yet joined
  size_t running_ = 0;
};

}  // namespace potop::serve
