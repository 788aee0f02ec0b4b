// SIGINT, SIGTERM and SIGHUP without signal handlers. Long commands (train, prepare, serve, …) stop
// cleanly on the first one: a callback records it and the command finishes what is under way; a
// second one ends the process at once, as the signal's default action would. A hangup (the
// terminal closed, or a service manager's stop) is a stop like the others, so that a server's
// streams end with their last chunk and a training run keeps its step; under nohup, which starts
// the process with SIGHUP ignored, it stays ignored.
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

// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread and starts the listener. Call it first
// thing in main(), before anything starts a thread: a thread started earlier would not inherit
// the block.
// Until a callback is installed, the listener gives a signal its default action.
void start_signal_listener();

// The next SIGINT, SIGTERM or SIGHUP calls `callback(signo)` on the listener thread (once: a
// second one takes the default action and ends the process). The callback should be quick and must not
// throw; it usually sets a flag that the command polls.
void install_stop_handlers(void (*callback)(int));

// What every long command (train, prepare, word2vec, serve) installs: the first stop signal is
// recorded (stop_signal_received() turns to its number) and `note`, when given, is printed on
// stderr; the command finishes what is under way and exits cleanly. A second one ends the process
// at once (a training run's last checkpoint stays intact).
void stop_on_signal(const char* note = nullptr);
int stop_signal_received();

}  // namespace potop
