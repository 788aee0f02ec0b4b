// Long commands (train, prepare) stop cleanly on the first SIGINT or SIGTERM: the handler only
// records the signal, the command finishes what is under way, and SA_RESETHAND makes a second
// signal end the process at once.
#pragma once
#include <csignal>

namespace potop::cli {

// Installs `handler` for SIGINT and SIGTERM, once-only (SA_RESETHAND), restarting interrupted
// system calls (SA_RESTART). The handler must be async-signal-safe.
void install_stop_handlers(void (*handler)(int));

}  // namespace potop::cli
