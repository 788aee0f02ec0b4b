// Everything `potop bow train` can be told: one struct, one field list (flags, help, the
// "training" object of config.json and of the training state). The model's fields are
// BowConfig's own list (model/bow_config.h); the run's fields are every trainer's (train/run_options.h).
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"
#include "models/bow/bow_config.h"
#include "train/run_options.h"

namespace potop {

struct BowOptions : RunOptions {
  // data
  std::string data;
  double val_fraction = 0.1;
  std::string tokenizer;  // a tokenizer directory; empty: a word tokenizer of the text (min_count)
  int min_count = 5;      // the word tokenizer of the text: words seen fewer times are <unk>
  // model: its vocab_size comes from the tokenizer
  BowConfig model;

  // The run: wider batches, a higher rate and no weight decay (a small model of few parameters).
  BowOptions() {
    out = "runs/bow";
    batch_size = 32;
    lr = 3e-3f, min_lr = 3e-4f;
    weight_decay = 0.0f;
  }
};

std::vector<Field> bow_option_fields(BowOptions& options);
inline std::vector<Field> fields_of(BowOptions& options) { return bow_option_fields(options); }
nlohmann::json to_json(const BowOptions& options);
// Impossible values are a potop::Error naming the flag.
void validate(const BowOptions& options);

}  // namespace potop
