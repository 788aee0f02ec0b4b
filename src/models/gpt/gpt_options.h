// Everything `potop train` can be told, as one struct and one field list. The field list
// drives the command-line flags (--n-layer), the JSON config file keys (n_layer), the help
// text and what is saved in config.json, so a new option is added in exactly one place. The
// model's fields are the GPTConfig's own list (model/config.h), not copies of it.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"
#include "models/gpt/gpt_config.h"
#include "tokenizer/tokenizer.h"

namespace potop {

struct TrainOptions {
  // data
  std::string data;
  std::string out = "runs/potop";
  double val_fraction = 0.1;
  Unknown unknown = Unknown::kError;  // characters outside a kept vocabulary (resume, new text)
  std::string tokenizer;  // a tokenizer directory; empty: a char tokenizer of the text
  std::string init_from;  // a model to start from (fine-tuning): its weights and tokenizer
  std::string init_embeddings;  // word2vec vectors to start a word tokenizer's wte from
  // model: its vocab_size comes from the data
  GPTConfig model;
  // optimisation: nanoGPT's small character-level recipe
  int batch_size = 12;
  int grad_accum = 1;
  int steps = 2000;
  float lr = 1e-3f, min_lr = 1e-4f;
  int warmup = 100;
  int lr_decay_steps = 0;  // steps of the cosine decay; 0 = steps (nanoGPT's lr_decay_iters)
  float beta1 = 0.9f, beta2 = 0.99f, weight_decay = 0.1f, grad_clip = 1.0f;
  // evaluation and logging
  int eval_interval = 250, eval_iters = 20, log_interval = 10;
  // run
  uint64_t seed = 1337;
  int threads = 0;  // 0 = all cores
  std::string parallel = "batch";  // split the batch over threads (BatchParallel), or each kernel
  bool profile = false;  // print a per-kernel breakdown of the step time at the end
  bool verbose = false;  // print the memory plan at the start
  // checkpoints and numerical guards
  int keep = 0;                 // also keep a resumable step-<N>.safetensors every `keep` steps
  bool skip_nonfinite = false;  // skip steps whose loss or gradient norm is not finite
  // multi-process training (docs/distributed.md)
  double mpi_bucket_mb = 2;  // gradients sent in buckets of this size during backward; 0: after it
  double mpi_timeout = 300;  // seconds a rank waits for the others before ending the run; 0: forever

  GPTConfig model_config(int vocab_size) const;
  // The step at which the learning rate reaches min_lr.
  int decay_steps() const { return lr_decay_steps > 0 ? lr_decay_steps : steps; }
};

// The largest --eval-iters: an evaluation that would take hours is a typing mistake.
inline constexpr int kMaxEvalIters = 100000;

// The options in --help order: data, the model's gpt_fields, then the rest.
std::vector<Field> option_fields(TrainOptions& options);

// Applies a JSON config file's keys to options, skipping keys in `skip` (flags given on the
// command line, which win). Unknown keys and wrong types are errors naming the file and key. A
// model directory's config.json works too: its "training" object is used.
// Returns the names (kebab-case) of the options the file set.
std::vector<std::string> apply_config_file(TrainOptions& options, const std::string& path,
                                           const std::vector<std::string>& skip);
// The same for a parsed JSON value; source names it in messages.
std::vector<std::string> apply_options_json(TrainOptions& options, const nlohmann::json& j, const std::string& source,
                                            const std::vector<std::string>& skip = {});
nlohmann::json to_json(const TrainOptions& options);

// Impossible values are a potop::Error naming the flag: sizes and steps must be positive,
// rates finite and in range, n_embd divisible by n_head, and so on.
void validate(const TrainOptions& options);

}  // namespace potop
