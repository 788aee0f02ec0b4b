// Everything `potop classify train` can be told: one struct, one field list (flags, help, the
// "training" object of config.json and of the training state). The model's fields are the
// body's (TransformerConfig's list) and the head's (classifier_config.h); the run's are every trainer's
// (train/run_options.h). The run defaults are Hugging Face's Trainer's for fine-tuning (AdamW
// β2 0.999, no weight decay, a linear schedule to 0, gradient clipping at 1, 3 epochs) with
// run_glue.py's batch of 32.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"
#include "models/classifier/classifier_config.h"
#include "train/run_options.h"

namespace potop {

// The learning rate of a run --lr does not set: BERT's fine-tuning rate with --init-from; a
// body trained from scratch needs a larger one.
inline constexpr float kFineTuneLr = 5e-5f, kFromScratchLr = 1e-3f;

struct ClassifierOptions : RunOptions {
  // data
  std::string data, dev;     // label<TAB>text files
  std::string init_from;     // a "gpt" or "bert" model directory whose body the classifier starts from
  std::string tokenizer;     // from scratch: a tokenizer directory; empty: a word tokenizer of the texts
  int min_count = 2;         // that word tokenizer: words seen fewer times are <unk>
  int epochs = 3;            // --steps, unless given: epochs × batches per epoch
  int patience = 3;          // early stopping: evaluations without a better dev accuracy (0: never)
  // model: vocab_size from the tokenizer; with --init-from the body's shape from that model
  ClassifierConfig model;

  ClassifierOptions() {
    out = "runs/classifier";
    batch_size = 32;
    lr = kFineTuneLr, min_lr = 0.0f;
    lr_schedule = LrShape::kLinear;
    warmup = 0;
    beta2 = 0.999f, weight_decay = 0.0f;
    log_interval = 10;
    model.pooling = Pooling::kAuto;
  }
};

std::vector<Field> classifier_option_fields(ClassifierOptions& options);
inline std::vector<Field> fields_of(ClassifierOptions& options) { return classifier_option_fields(options); }
nlohmann::json to_json(const ClassifierOptions& options);
// Impossible values are a potop::Error naming the flag.
void validate(const ClassifierOptions& options);

}  // namespace potop
