// SIGINT and SIGTERM reach the command through the listener thread, never through a handler on
// the interrupted thread's stack: hundreds of signals landing in oneDNN's JIT GEMMs (which point
// rsp at the heap, oneDNN issue #4845) leave the heap intact; without a callback a signal ends
// the process as it would by default; the callback runs once and a second signal ends it.
//
// Each case runs in a fresh process (this binary again, told what to do by POTOP_SIGNAL_CHILD):
// the block must come before any thread exists, and the test binary has OpenMP threads by now.
#include "core/stop_signals.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "kernels/gemm.h"

namespace potop {
namespace {

std::atomic<int> g_terms{0};
std::atomic<bool> g_done{false};

void count_signal(int signo) {
  if (signo == SIGINT) g_done = true;
  else ++g_terms;
  install_stop_handlers(count_signal);  // for the next one
}

void say(const char* line) { [[maybe_unused]] ssize_t n = ::write(STDOUT_FILENO, line, std::char_traits<char>::length(line)); }

// The child's work, by mode; its exit code is what the parent checks.
int child_main(const std::string& mode) {
  start_signal_listener();
  if (mode == "gemm") {
    // GEMMs big enough to go to oneDNN on every CPU (2^27 multiply-adds), and heap churn beside
    // them, so that a corrupted heap shows in free(); until the parent's SIGINT.
    install_stop_handlers(count_signal);
    const int n = 512;
    std::vector<float> a(size_t(n) * n, 0.5f), b(size_t(n) * n, 0.25f), c(size_t(n) * n);
    say("ready\n");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!g_done && std::chrono::steady_clock::now() < deadline) {
      std::vector<float> scratch(1000 + g_terms % 7 * 4096, 1.0f);
      sgemm(false, true, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
      if (c[0] != 0.125f * n || scratch.back() != 1.0f) return 4;
    }
    say(("terms " + std::to_string(g_terms.load()) + "\n").c_str());  // _Exit flushes no stdio
    return g_done ? 0 : 5;
  }
  if (mode == "default") {  // no callback: SIGTERM ends the process
    say("ready\n");
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return 6;
  }
  if (mode == "twice") {  // the callback runs once; the second signal ends the process
    install_stop_handlers([](int) { say("stopping\n"); });
    say("ready\n");
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return 7;
  }
  return 8;
}

// Runs before main(): a child does its work and exits, before gtest starts anything.
const int kChildExit = [] {
  if (const char* mode = std::getenv("POTOP_SIGNAL_CHILD")) std::_Exit(child_main(mode));
  return 0;
}();

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;  // its stdout

  explicit Child(const std::string& mode) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    const std::string env = "POTOP_SIGNAL_CHILD=" + mode;
    char* const argv[] = {const_cast<char*>("unit_tests"), nullptr};
    char* const envp[] = {const_cast<char*>(env.c_str()), nullptr};
    pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execve("/proc/self/exe", argv, envp);
      ::_exit(127);
    }
    ::close(fds[1]);
    out = ::fdopen(fds[0], "r");
  }
  ~Child() {
    if (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == 0) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
    if (out) std::fclose(out);
  }
  std::string line() {
    char buf[256];
    return out && std::fgets(buf, sizeof buf, out) ? std::string(buf) : std::string();
  }
  int wait_status() {
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
};

TEST(StopSignals, ManySignalsDuringGemmsLeaveTheHeapIntact) {
  Child child("gemm");
  ASSERT_GT(child.pid, 0);
  ASSERT_EQ(child.line(), "ready\n");
  for (int i = 0; i < 400; ++i) {
    ::kill(child.pid, SIGTERM);
    std::this_thread::sleep_for(std::chrono::microseconds(500 + i % 7 * 300));
  }
  ::kill(child.pid, SIGINT);
  const std::string counted = child.line();
  const int status = child.wait_status();
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // Signals sent while one is pending merge into it: far fewer than 400 arrive, but many do.
  EXPECT_GE(std::atoi(counted.c_str() + 6), 20) << counted;
}

TEST(StopSignals, WithoutACallbackASignalHasItsDefaultAction) {
  Child child("default");
  ASSERT_EQ(child.line(), "ready\n");
  ::kill(child.pid, SIGTERM);
  const int status = child.wait_status();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST(StopSignals, TheCallbackRunsOnceAndASecondSignalEndsTheProcess) {
  Child child("twice");
  ASSERT_EQ(child.line(), "ready\n");
  ::kill(child.pid, SIGINT);
  EXPECT_EQ(child.line(), "stopping\n");
  ::kill(child.pid, SIGINT);
  const int status = child.wait_status();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGINT);
}

}  // namespace
}  // namespace potop
