// The server's task queue (serve/connection_threads.h): every task runs, each on a thread of its
// own that exits afterwards, never more than max_threads at once, the others waiting in order;
// shutdown (and the destructor) waits for all of them; and it serves a real httplib::Server.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "serve/connection_threads.h"

namespace potop::serve {
namespace {

using namespace std::chrono_literals;

// Counts the threads that exit after touching it: a thread_local's destructor runs at thread exit.
std::atomic<int> exited_threads{0};
struct ExitCounter {
  ~ExitCounter() { ++exited_threads; }
};
thread_local ExitCounter exit_counter;
void count_my_exit() { (void)&exit_counter; }

// A gate that tasks wait behind until the test opens it.
struct Gate {
  void wait() {
    std::unique_lock lock(mutex);
    opened.wait(lock, [&] { return open; });
  }
  void release() {
    {
      std::lock_guard lock(mutex);
      open = true;
    }
    opened.notify_all();
  }
  std::mutex mutex;
  std::condition_variable opened;
  bool open = false;
};

bool eventually(const std::function<bool()>& condition) {
  for (auto end = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < end;) {
    if (condition()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return condition();
}

TEST(ConnectionThreads, RunsEveryTaskEachOnAThreadThatExits) {
  exited_threads = 0;
  std::atomic<int> ran{0};
  ConnectionThreads queue(4);
  for (int i = 0; i < 100; ++i)
    queue.enqueue([&] {
      count_my_exit();
      ++ran;
    });
  queue.shutdown();
  EXPECT_EQ(ran, 100);
  // A pool would have run them on at most 4 threads, still alive here.
  EXPECT_EQ(exited_threads, 100);
  EXPECT_EQ(queue.running(), 0u);
  EXPECT_EQ(queue.waiting(), 0u);
}

TEST(ConnectionThreads, NeverRunsMoreThanMaxThreadsAndTheRestWaitInOrder) {
  Gate gate;
  std::atomic<int> now{0}, peak{0};
  std::mutex order_mutex;
  std::vector<int> order;
  ConnectionThreads queue(3);
  for (int i = 0; i < 10; ++i)
    queue.enqueue([&, i] {
      const int n = ++now;
      for (int p = peak; n > p && !peak.compare_exchange_weak(p, n);) {
      }
      if (i < 3) gate.wait();  // the first three hold their threads until the gate opens
      {
        std::lock_guard lock(order_mutex);
        order.push_back(i);
      }
      --now;
    });
  ASSERT_TRUE(eventually([&] { return now == 3; }));
  std::this_thread::sleep_for(20ms);  // nothing else may start while the three run
  EXPECT_EQ(queue.running(), 3u);
  EXPECT_EQ(queue.waiting(), 7u);
  EXPECT_EQ(now, 3);
  EXPECT_TRUE(order.empty());
  gate.release();
  queue.shutdown();
  EXPECT_EQ(peak, 3);
  ASSERT_EQ(order.size(), 10u);
  // Every one ran once (with 3 at a time they may finish out of order; with one thread they run
  // in the order given: the next test).
  std::vector<int> waited(order.begin(), order.end());
  std::sort(waited.begin(), waited.end());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(waited[i], i);
}

TEST(ConnectionThreads, OneThreadRunsTasksInTheOrderGiven) {
  std::vector<int> order;  // no lock: one task at a time
  {
    ConnectionThreads queue(1);
    for (int i = 0; i < 20; ++i)
      queue.enqueue([&, i] {
        std::this_thread::sleep_for(100us);
        order.push_back(i);
      });
  }  // the destructor waits for them
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
}

TEST(ConnectionThreads, ShutdownWaitsForRunningAndWaitingTasks) {
  Gate gate;
  std::atomic<int> done{0};
  ConnectionThreads queue(2);
  for (int i = 0; i < 6; ++i)
    queue.enqueue([&] {
      gate.wait();
      ++done;
    });
  std::atomic<bool> returned{false};
  std::thread stopper([&] {
    queue.shutdown();
    returned = true;
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(returned);  // two tasks are blocked and four wait
  gate.release();
  stopper.join();
  EXPECT_TRUE(returned);
  EXPECT_EQ(done, 6);
  queue.shutdown();  // again: nothing to wait for
}

TEST(ConnectionThreads, ServesAnHttplibServer) {
  httplib::Server server;
  server.new_task_queue = [] { return new ConnectionThreads(2); };
  server.Get("/hi", [](const httplib::Request&, httplib::Response& res) { res.set_content("hi", "text/plain"); });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread listener([&] { server.listen_after_bind(); });
  // Five clients at once, two connections served at a time, each a few keep-alive requests.
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int c = 0; c < 5; ++c)
    clients.emplace_back([&] {
      httplib::Client client("127.0.0.1", port);
      for (int i = 0; i < 3; ++i) {
        auto res = client.Get("/hi");
        if (res && res->status == 200 && res->body == "hi") ++ok;
      }
    });
  for (auto& t : clients) t.join();
  server.stop();
  listener.join();
  EXPECT_EQ(ok, 15);
}

}  // namespace
}  // namespace potop::serve
