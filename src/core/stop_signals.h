// SIGINT and SIGTERM without signal handlers. Long commands (train, prepare, serve, …) stop
// cleanly on the first one: a callback records it and the command finishes what is under way; a
// second one ends the process at once, as the signal's default action would.
//
// Why no handler: a handler runs on the stack of whichever thread the signal interrupts, and the
// JIT GEMM kernels of oneDNN before 3.11 point rsp at a heap workspace while they run (oneDNN
// issue #4845). A signal landing in one wrote its frame into the heap, and a later free() aborted
// with "corrupted size vs. prev_size" (cli.signals caught it under load). So main() blocks both
// signals before any other thread exists, every thread inherits the block, and one listener
// thread takes them with sigwait(): the kernel never pushes a signal frame on anyone's stack.
#pragma once
#include <csignal>

namespace potop {

// Blocks SIGINT and SIGTERM in the calling thread and starts the listener. Call it first thing in
// main(), before anything starts a thread: a thread started earlier would not inherit the block.
// Until a callback is installed, the listener gives a signal its default action.
void start_signal_listener();

// The next SIGINT or SIGTERM calls `callback(signo)` on the listener thread (once: a second one
// takes the default action and ends the process). The callback should be quick and must not
// throw; it usually sets a flag that the command polls.
void install_stop_handlers(void (*callback)(int));

// What the training commands (potop train, potop bow train) install: the first SIGINT or
// SIGTERM asks the trainer to finish its step, checkpoint and exit 0 (training_stop_requested()
// turns true); a second one ends the process at once (the last checkpoint stays intact).
void install_training_stop_handlers();
bool training_stop_requested();

}  // namespace potop
