#include "core/stop_signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

namespace potop {

namespace {

std::atomic<void (*)(int)> g_callback{nullptr};
std::atomic<bool> g_callback_installed{false};
volatile sig_atomic_t g_stop_signal = 0;
const char* g_stop_note = nullptr;
bool g_ignored_at_start[NSIG] = {};

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

// Never runs (the signals are blocked in every thread); it only keeps an ignored disposition,
// inherited from a shell that started us in the background, from discarding them before
// sigwait() can take them, as a handler installed by sigaction() used to.
extern "C" void never_called(int) {}

// The default action of `signo`: for SIGINT, SIGTERM and SIGHUP, the end of the process by that signal.
[[noreturn]] void default_action(int signo) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signo, &dfl, nullptr);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, signo);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(signo);
  _exit(128 + signo);  // not reached
}

void listen() {
  const sigset_t set = stop_signals();
  for (;;) {
    int signo = 0;
    if (sigwait(&set, &signo) != 0) continue;
    // nohup's promise: a hangup ignored when the process started is ignored for good.
    if (signo == SIGHUP && g_ignored_at_start[SIGHUP]) continue;
    if (void (*callback)(int) = g_callback.exchange(nullptr)) {
      callback(signo);
      continue;
    }
    // A signal the process ignored when it started stays ignored until a command asks for it.
    if (g_ignored_at_start[signo] && !g_callback_installed) continue;
    default_action(signo);
  }
}

extern "C" void record_stop_signal(int signo) {
  g_stop_signal = signo;
  if (const char* note = g_stop_note) {
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, note, std::strlen(note));
  }
}

}  // namespace

void start_signal_listener() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  for (int signo : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    sigaction(signo, nullptr, &old);
    g_ignored_at_start[signo] = old.sa_handler == SIG_IGN;
    struct sigaction sa {};
    sa.sa_handler = never_called;
    sigemptyset(&sa.sa_mask);
    sigaction(signo, &sa, nullptr);
  }
  std::thread(listen).detach();
}

void install_stop_handlers(void (*callback)(int)) {
  g_callback_installed = true;
  g_callback = callback;
}

void stop_on_signal(const char* note) {
  g_stop_note = note;
  install_stop_handlers(record_stop_signal);
}

int stop_signal_received() { return g_stop_signal; }

}  // namespace potop
