// The options every command that uses a trained model shares, and loading it: -m/--model,
// --checkpoint, -t/--threads. Loading says on stderr which checkpoint it took, and why.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "checkpoint/model_dir.h"

namespace potop::cli {

struct ModelArgs {
  std::string model, checkpoint;
  int threads = 0;
};

void add_model_options(CLI::App* cmd, ModelArgs& args);

// Applies --threads and loads the model.
LoadedModel load_model(const ModelArgs& args);
// Says on stderr which checkpoint was loaded, and why: "checkpoint: <path>: step N, val loss X".
// Commands call it once their inputs are checked, so that an error is the only thing they print.
void announce(const LoadedModel& model);

}  // namespace potop::cli
