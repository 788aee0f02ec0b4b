#include "cli/stop_signals.h"

#include <signal.h>
#include <unistd.h>

namespace potop::cli {

namespace {

volatile sig_atomic_t g_stop_signal = 0;

extern "C" void on_training_stop_signal(int signo) {
  g_stop_signal = signo;
  static const char msg[] = "\npotop: stopping: finishing this step (or dropping the evaluation under way) and saving a checkpoint; again to quit at once\n";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
}

}  // namespace

void install_training_stop_handlers() { install_stop_handlers(on_training_stop_signal); }

bool training_stop_requested() { return g_stop_signal != 0; }

void install_stop_handlers(void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace potop::cli
