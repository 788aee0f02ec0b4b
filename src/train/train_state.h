// The training state: everything `potop train --resume` needs to continue a run so that its
// losses are bit-identical to a run that was never interrupted (same seed, same thread count).
//
// It is one safetensors file, written atomically, so its parts can never disagree:
//   <param name>          F32  the weights, under the same names as latest.safetensors
//   adamw.m.<param name>  F32  AdamW's first moment
//   adamw.v.<param name>  F32  AdamW's second moment
//   __metadata__          potop.kind = "train_state", the step, AdamW's step count, the batch
//                         sampler's RNG state, the best score so far, the options (JSON), the
//                         model config (JSON), and hashes of the training text and vocabulary.
// The model directory keeps the newest one as resume.safetensors and, with --keep K, one every
// K steps as step-<N>.safetensors. Evaluation and dropout need no saved state: evaluation
// batches come from a fixed seed and dropout masks from (seed, step), so only the sampler's
// generator moves between steps. Because the weights are under their usual names, a state file
// also loads as a checkpoint for `potop sample` / `potop eval` (load_weights skips adamw.*).
#pragma once
#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "core/arena.h"
#include "core/rng.h"
#include "core/safetensors.h"
#include "model/gpt.h"
#include "tokenizer/char_tokenizer.h"
#include "train/options.h"

namespace potop {

namespace fs = std::filesystem;

inline constexpr const char* kResumeFile = "resume.safetensors";
inline constexpr const char* kTrainStateKind = "train_state";
inline constexpr int kTrainStateVersion = 1;

struct TrainState {
  // The next optimizer step to run. The evaluation (and checkpoint) due at this step is done.
  int step = 0;
  long adam_steps = 0;  // AdamW's bias-correction counter (steps skipped as non-finite don't count)
  Rng::State sampler{};  // the training batch sampler's generator
  float best_score = std::numeric_limits<float>::infinity();  // lowest val (or train) loss so far
  float train_loss = std::numeric_limits<float>::quiet_NaN();  // of the latest evaluation
  float val_loss = std::numeric_limits<float>::quiet_NaN();
  int nonfinite_skipped = 0;  // steps skipped by --skip-nonfinite
  uint64_t data_hash = 0;     // FNV-1a-64 of the training text (hash_training_text)
  uint64_t vocab_hash = 0;    // CharTokenizer::hash()
  int threads = 0;            // threads actually used (bit-identical resume needs the same)
  double elapsed_s = 0;       // training time before this checkpoint, over all sessions
  nlohmann::json options = nlohmann::json::object();  // to_json(TrainOptions)
  nlohmann::json config = nlohmann::json::object();   // to_json(GPTConfig)
};

// FNV-1a-64 of the decoded text (code points as 32-bit little-endian values).
uint64_t hash_training_text(std::u32string_view text);

// Writes the state file atomically: m and v are arenas with the model's parameter layout.
void save_train_state(const fs::path& path, const GPT& model, const Arena& m, const Arena& v,
                      const TrainState& state);

// Parses and validates the metadata of a state file. Every problem (not a training state,
// a missing or malformed key, an unsupported version) is a potop::Error naming the file and key.
TrainState read_train_state(const SafetensorsFile& file);

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

// Copies the weights and both moments into the model and the arenas, checking names and shapes.
void load_train_state_tensors(const SafetensorsFile& file, GPT& model, Arena& m, Arena& v);

// The state file that `--resume what` names: a directory (its resume.safetensors) or a state
// file inside a model directory. Sets dir to the model directory. Errors name the path.
fs::path resolve_resume_path(const fs::path& what, fs::path& dir);

// Drops the records of metrics.jsonl that lie after a checkpoint at `step` (train records with
// step > step, eval records with step > step, and any line that is not a complete JSON object,
// such as one cut short by a crash), so a resumed run appends exactly what an uninterrupted
// run would have written. A missing file is left missing.
void truncate_metrics(const fs::path& metrics, int step);

// Removes "<name>.tmp-<pid>" files that a killed process left in dir (write_file_atomic's
// temporaries) for the files potop train writes. Returns how many were removed.
int remove_stale_temporaries(const fs::path& dir);

}  // namespace potop
