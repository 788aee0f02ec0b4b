// `potop train` for the GPT: read the text, build the tokenizer and model (or restore them from a
// saved run), and hand the run harness (run.h) its job — a train_step over the sampler's batches,
// an evaluation, and what a checkpoint holds. Everything a run does beyond setting up its model
// and data lives in the harness, which every model's trainer shares.
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "dist/communicator.h"
#include "models/gpt/gpt_options.h"
#include "train/run.h"

namespace potop {

using TrainResult = RunResult;

// How one invocation runs, beyond the options saved with the model.
// The ranks of a multi-process run (mpirun -np P potop train), shared by the CLI and train().
struct RanksOfRun {
  Communicator* comm = nullptr;
  // Set by train() once this rank has met the others at the end of setup (agree_on_setup). A
  // rank whose setup throws before that must still meet them there, with its error: the CLI
  // does it, so that no rank waits for it forever.
  bool agreed = false;
  bool refused = false;  // the agreement refused the run (rank 0 reports it, every rank exits 1)
};

struct TrainControl {
  // Continue the run saved in this model directory (or state file) instead of starting anew.
  std::string resume;
  // Option names (kebab-case, as in option_fields) the user set explicitly. On resume they
  // override the checkpoint's options; every other option comes from the checkpoint.
  std::vector<std::string> given;
  // Let a resumed run continue on a text whose hash differs from the checkpoint's.
  bool allow_data_change = false;
  // Start a new run in an --out that holds a model, replacing it (without it, that is refused).
  bool force = false;
  // Polled before each step with the number of steps done; returning true makes the trainer
  // write a checkpoint and return with interrupted = true (the CLI sets it on SIGINT/SIGTERM).
  std::function<bool(int steps_done)> stop_requested;
  // Null: one process. Otherwise this process is one rank of a multi-process run: it trains on
  // its share of each step's micro-batches, only rank 0 writes files and prints, and a stop
  // request seen by any rank stops all of them at the same step.
  RanksOfRun* ranks = nullptr;
};

// Throws potop::Error for every bad input (file, flag, directory, checkpoint), and when a
// step's loss or gradient norm is not finite (unless options.skip_nonfinite).
TrainResult train(const TrainOptions& options, std::FILE* log = stderr, const TrainControl& control = {});

}  // namespace potop
