// Everything `potop translate pretrain` can be told: T5's span-corruption pre-training of an
// encoder-decoder on plain text (data/span_corruption.h), before `potop translate train
// --init-from` fine-tunes it on sentence pairs. The run's options (train/run_options.h), the text
// files and their tokenizer, the corruption and the model.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"
#include "data/span_corruption.h"
#include "models/encoder_decoder/encoder_decoder_config.h"
#include "train/run_options.h"

namespace potop {

struct PretrainOptions : RunOptions {
  // data: text files, one text a line, several languages alike ('\n'-separated: the --data flag
  // is repeatable, the checkpoint keeps one string)
  std::string data;
  std::string tokenizer;  // a tokenizer directory: potop tokenizer train, or a translation model's
  int dev_size = 200;     // chunks held out for the validation loss
  SpanCorruption corruption;
  EncoderDecoderConfig model;

  // Chunks of up to block_size - 1 tokens (the source adds </s>), --batch-size of them a
  // micro-batch; the recipe of docs/translation.md's measured runs (the noam schedule at this
  // width leaves the decoder ignoring its source).
  PretrainOptions() {
    out = "runs/pretrain";
    batch_size = 32;
    steps = 3000;
    lr_schedule = LrShape::kCosine, lr = 1e-3f, min_lr = 1e-5f, warmup = 200;
    beta2 = 0.98f, eps = 1e-9f, weight_decay = 0.0f;
    eval_interval = 500, eval_iters = 10, log_interval = 50;
  }

  std::vector<std::string> data_files() const;
  // The longest chunk: every token of the source but its </s>.
  int chunk_length() const { return model.block_size - 1; }
};

std::vector<Field> pretrain_fields(PretrainOptions& options);
inline std::vector<Field> fields_of(PretrainOptions& options) { return pretrain_fields(options); }
nlohmann::json to_json(const PretrainOptions& options);
void validate(const PretrainOptions& options);

}  // namespace potop
