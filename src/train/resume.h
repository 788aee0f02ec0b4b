// Resuming a run: which state file `--resume` names, and the options of the resumed run.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/train_state.h"
#include "models/gpt/gpt_options.h"

namespace potop {

namespace fs = std::filesystem;

// The options of a resumed run: the checkpoint's, with the options named in `given` taken from
// `requested`. Refuses, with one potop::Error naming every such flag and both values, a change
// to the model's architecture, to --val-fraction (it moves the data split; allowed with
// allow_data_change), an --out other than `dir`, and --steps below the checkpoint's step.
// Changes that are possible but make the run differ from an uninterrupted one (learning rate,
// schedule, optimiser, batch, dropout, seed, steps) are applied and described in `notes`.
// --data may name another path: the trainer compares the text's hash.
TrainOptions resume_options(const TrainState& state, const TrainOptions& requested,
                            const std::vector<std::string>& given, const fs::path& dir, bool allow_data_change,
                            std::vector<std::string>& notes);

// The state file that `--resume what` names: a directory (its resume.safetensors) or a state
// file inside a model directory. Sets dir to the model directory. Errors name the path.
fs::path resolve_resume_path(const fs::path& what, fs::path& dir);

}  // namespace potop
