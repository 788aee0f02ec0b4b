// Everything `potop bow train` can be told: one struct, one field list (flags, help, the
// "training" object of config.json and of the training state). The model's fields are
// BowConfig's own list (model/bow_config.h); the optimisation fields mean what potop train's do.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"
#include "models/bow/bow_config.h"

namespace potop {

struct BowOptions {
  // data
  std::string data;
  std::string out = "runs/bow";
  double val_fraction = 0.1;
  std::string tokenizer;  // a tokenizer directory; empty: a word tokenizer of the text (min_count)
  int min_count = 5;      // the word tokenizer of the text: words seen fewer times are <unk>
  // model: its vocab_size comes from the tokenizer
  BowConfig model;
  // optimisation
  int batch_size = 32;
  int grad_accum = 1;
  int steps = 2000;
  float lr = 3e-3f, min_lr = 3e-4f;
  int warmup = 100;
  int lr_decay_steps = 0;  // 0 = steps
  float beta1 = 0.9f, beta2 = 0.99f, weight_decay = 0.0f, grad_clip = 1.0f;
  // evaluation and logging
  int eval_interval = 250, eval_iters = 20, log_interval = 10;
  // run
  uint64_t seed = 1337;
  int threads = 0;
  bool verbose = false;
  int keep = 0;
  bool skip_nonfinite = false;

  int decay_steps() const { return lr_decay_steps > 0 ? lr_decay_steps : steps; }
};

std::vector<Field> bow_option_fields(BowOptions& options);
nlohmann::json to_json(const BowOptions& options);
// Sets the options a training state's "training" object holds (resume), skipping `skip`.
void apply_options_json(BowOptions& options, const nlohmann::json& j, const std::string& source,
                        const std::vector<std::string>& skip);
// Impossible values are a potop::Error naming the flag.
void validate(const BowOptions& options);

}  // namespace potop
