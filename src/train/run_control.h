// How one invocation of a trainer runs, beyond the options saved with the model: resume or not,
// the flags given, --force, stop requests and the ranks of a multi-process run. The CLI fills it
// in (cli/train_command.h) the same way for every model.
#pragma once
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "dist/communicator.h"

namespace potop {

// The ranks of a multi-process run (mpirun -np P potop ... train), shared by the CLI and the kit.
struct RanksOfRun {
  Communicator* comm = nullptr;
  // Set by the kit once this rank has met the others at the end of setup (agree_on_setup). A
  // rank whose setup throws before that must still meet them there, with its error: the CLI
  // does it (cli/train_command.h), so that no rank waits for it forever.
  bool agreed = false;
  bool refused = false;  // the agreement refused the run (rank 0 reports it, every rank exits 1)
};

// How one invocation of a trainer runs, beyond the options saved with the model.
struct RunControl {
  // Continue the run saved in this model directory (or state file) instead of starting anew.
  std::string resume;
  // Option names (kebab-case, as in the field lists) the user set explicitly. On resume they
  // override the checkpoint's options; every other option comes from the checkpoint.
  std::vector<std::string> given;
  // Let a resumed run continue on data whose hash differs from the checkpoint's.
  bool allow_data_change = false;
  // Start a new run in an --out that holds a model, replacing it (without it, that is refused).
  bool force = false;
  // Polled before each step with the number of steps done; true makes the run checkpoint and
  // return with interrupted = true (the CLI sets it on SIGINT/SIGTERM).
  std::function<bool(int steps_done)> stop_requested;
  // Null: one process. Otherwise this process is one rank of a multi-process run.
  RanksOfRun* ranks = nullptr;

  bool was_given(const std::string& name) const { return std::find(given.begin(), given.end(), name) != given.end(); }
};

}  // namespace potop
