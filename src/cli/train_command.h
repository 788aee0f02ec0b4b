// What every training command (potop train, potop bow train, potop translate train) shares on the
// command line: --resume, --allow-data-change, --force and --json beside its options' fields; the
// stop signals; mpirun's ranks (MPI started only under mpirun, a rank that fails in setup still
// meeting the others, one rank writing); and the --json summary at the end. A command adds its
// fields and hands over its trainer.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/fields.h"
#include "train/run.h"
#include "train/run_control.h"

namespace potop::cli {

struct TrainFlags {
  RunControl control;
  bool json = false;
};

// The flags of a training command: --resume, --allow-data-change, --force, --json and `fields`.
void add_train_flags(CLI::App* cmd, TrainFlags& flags, const std::vector<Field>& fields);
// After parsing: the names of the fields the command line set, into flags.control.given.
void collect_given(const CLI::App* cmd, TrainFlags& flags, const std::vector<Field>& fields);

// Runs `train` as one process, or as one rank under mpirun; prints the --json summary (out: the
// run's directory). Returns the exit status.
int run_train_command(TrainFlags& flags, const std::string& out,
                      const std::function<RunResult(std::FILE* log, const RunControl& control)>& train);

}  // namespace potop::cli
