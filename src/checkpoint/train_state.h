// The training state: everything `potop train --resume` needs to continue a run so that its
// losses are bit-identical to a run that was never interrupted (same seed, same thread count).
//
// It is one safetensors file, written atomically, so its parts can never disagree:
//   <param name>          F32  the weights, under the same names as latest.safetensors
//   adamw.m.<param name>  F32  AdamW's first moment
//   adamw.v.<param name>  F32  AdamW's second moment
//   __metadata__          potop.kind = "train_state", the step, AdamW's step count, the batch
//                         sampler's RNG state, the best score so far, the options (JSON), the
//                         model config (JSON), and hashes of the training text and vocabulary;
//                         and, like every weights file (weights.h), the model's kind, config and
//                         tokenizer, and potop.tensor_groups = "adamw.m.,adamw.v.".
// The model directory keeps the newest one as resume.safetensors and, with --keep K, one every
// K steps as step-<N>.safetensors. Evaluation and dropout need no saved state: evaluation
// batches come from a fixed seed and dropout masks from (seed, step), so only the sampler's
// generator moves between steps. Because the weights are under their usual names, a state file
// also loads as a checkpoint for `potop sample` / `potop eval` (check_weights knows the groups it declares).
#pragma once
#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/weights.h"
#include "core/rng.h"
#include "core/safetensors.h"
#include "nn/parameters.h"

namespace potop {

namespace fs = std::filesystem;

inline constexpr const char* kResumeFile = "resume.safetensors";
inline constexpr const char* kTrainStateKind = "train_state";
inline constexpr int kTrainStateVersion = 1;

// The state kept every N steps with --keep N: "step-000500.safetensors".
std::string snapshot_file(int step);

struct TrainState {
  // The next optimizer step to run. The evaluation (and checkpoint) due at this step is done,
  // unless eval_pending: it was abandoned (a stop request during it) and is still to do.
  int step = 0;
  bool eval_pending = false;
  long adam_steps = 0;  // AdamW's bias-correction counter (steps skipped as non-finite don't count)
  Rng::State sampler{};  // the training batch sampler's generator
  float best_score = std::numeric_limits<float>::infinity();  // lowest val (or train) loss so far
  float train_loss = std::numeric_limits<float>::quiet_NaN();  // of the latest evaluation
  float val_loss = std::numeric_limits<float>::quiet_NaN();
  int nonfinite_skipped = 0;  // steps skipped by --skip-nonfinite
  int stale_evaluations = 0;  // evaluations since the best score, for early stopping (--patience)
  uint64_t data_hash = 0;     // FNV-1a-64 of the training text (hash_training_text)
  uint64_t vocab_hash = 0;    // Tokenizer::hash(), written by save_weights from the header's tokenizer
  int threads = 0;            // threads actually used (bit-identical resume needs the same)
  int ranks = 1;              // processes of a multi-process run (mpirun -np P); 1 when absent
  double elapsed_s = 0;       // training time before this checkpoint, over all sessions
  nlohmann::json options = nlohmann::json::object();  // to_json(GptOptions)
  // The command that trained it ("potop translate pretrain"): two trainers may share a model kind
  // (translate train and pretrain); empty in states written before it was kept.
  std::string trainer;
  nlohmann::json config = nlohmann::json::object();   // to_json(GPTConfig)
};

// Writes the state file atomically: the parameters, the groups' tensors (AdamW's moments), the
// model header and the state's metadata.
void save_train_state(const fs::path& path, const ParameterSet& params, const ModelHeader& header,
                      const std::vector<TensorGroup>& groups, const TrainState& state);

// Parses and validates the metadata of a state file. Every problem (not a training state,
// a missing or malformed key, an unsupported version) is a potop::Error naming the file and key.
TrainState read_train_state(const SafetensorsFile& file);

// Copies the weights and the groups' tensors into the parameters and the groups' arenas, checking
// names and shapes.
void load_train_state_tensors(const SafetensorsFile& file, ParameterSet& params, const std::vector<TensorGroup>& groups);

}  // namespace potop
