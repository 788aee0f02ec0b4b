// Resuming a run, for every model: which state file `--resume` names, and the options of the
// resumed run (the checkpoint's, with the flags given now on top).
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/train_state.h"
#include "core/error.h"
#include "core/fields.h"
#include "train/run_control.h"
#include "train/run_options.h"

namespace potop {

namespace fs = std::filesystem;

// Where a model directory was imported from (config.json's "imported"."from", such as "hf" or
// "gguf"), or "" for one that potop trained or that is not a model.
std::string imported_from(const fs::path& dir);
// The state file that `--resume what` names: a directory (its resume.safetensors) or a state
// file inside a model directory. Sets dir to the model directory. Errors name the path and the
// command that writes such a directory.
fs::path resolve_resume_path(const fs::path& what, fs::path& dir, const std::string& command = "potop train");

// The options of a resumed run, of any model's Options (derived from RunOptions, its field list
// found by fields_of(Options&)): the checkpoint's, with the options named in control.given taken
// from `requested`. Refuses, with one potop::Error naming every such flag and both values, a
// change to the model's shape (the fields marked shape), to the data split (kSplitOptions;
// allowed with --allow-data-change), an --out other than `dir`, and --steps below the
// checkpoint's step. More --steps keeps the run's cosine decay (only --lr-decay-steps stretches
// it). Changes that are possible but make the run differ from an uninterrupted one are applied
// and described in `notes`. --data may name another path: the trainer compares the data's hash.
template <class Options>
Options resume_options(const TrainState& state, const Options& requested, const RunControl& control,
                       const fs::path& dir, std::vector<std::string>& notes);

// The model-independent part: `merged` holds the saved options (whose JSON is `saved`), `given`
// the command line's; the given ones are copied over and checked.
void merge_resumed_options(const std::vector<Field>& merged, const std::vector<Field>& given, const nlohmann::json& saved,
                           RunOptions& run, int saved_step, const RunControl& control, const fs::path& dir,
                           std::vector<std::string>& notes);

template <class Options>
Options resume_options(const TrainState& state, const Options& requested, const RunControl& control,
                       const fs::path& dir, std::vector<std::string>& notes) {
  if (!state.options.is_object()) throw Error(dir.string() + ": the checkpoint's options are not a JSON object");
  Options saved;
  apply_json(fields_of(saved), state.options, dir.string() + ": the checkpoint's options", "option");
  Options merged = saved, from = requested;
  merge_resumed_options(fields_of(merged), fields_of(from), fields_to_json(fields_of(saved)), merged, state.step,
                        control, dir, notes);
  return merged;
}

}  // namespace potop
