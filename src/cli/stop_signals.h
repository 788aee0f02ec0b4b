// Long commands (train, prepare) stop cleanly on the first SIGINT or SIGTERM: the handler only
// records the signal, the command finishes what is under way, and SA_RESETHAND makes a second
// signal end the process at once.
#pragma once
#include <csignal>

namespace potop::cli {

// Installs `handler` for SIGINT and SIGTERM, once-only (SA_RESETHAND), restarting interrupted
// system calls (SA_RESTART). The handler must be async-signal-safe.
void install_stop_handlers(void (*handler)(int));

// What the training commands (potop train, potop bow train) install: the first SIGINT or
// SIGTERM asks the trainer to finish its step, checkpoint and exit 0 (training_stop_requested()
// turns true); a second one ends the process at once (the last checkpoint stays intact).
void install_training_stop_handlers();
bool training_stop_requested();

}  // namespace potop::cli
