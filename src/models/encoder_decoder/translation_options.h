// Everything `potop translate train` can be told: the run's options (train/run_options.h) with
// the paper's defaults, the pairs and their split, the shared BPE vocabulary and the model.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"
#include "data/parallel_corpus.h"
#include "models/encoder_decoder/encoder_decoder_config.h"
#include "train/run_options.h"

namespace potop {

struct TranslationOptions : RunOptions {
  // data
  std::string data;
  std::string source = "en", target = "pl";
  std::string columns = "en,pl";  // the languages of the file's two columns
  BadLines bad_lines = BadLines::kSkip;
  int dev_size = 500, test_size = 1000;
  int vocab_size = 8000;  // of the shared BPE tokenizer
  std::string tokenizer;  // a tokenizer directory instead of a BPE learned from the pairs
  std::string init_from;  // fine-tuning: a model to start from (potop translate pretrain's)
  // model
  EncoderDecoderConfig model;
  // batches of about this many padded tokens, of sentences of similar lengths (not --batch-size)
  int batch_tokens = 2048;
  int eval_sentences = 200;  // dev sentences translated for BLEU and chrF at each evaluation

  // The run: the paper's Adam (beta2 0.98, eps 1e-9, no weight decay) and warm-up schedule.
  TranslationOptions() {
    out = "runs/translate";
    steps = 3000;
    lr_schedule = LrShape::kNoam, lr = 1.0f, min_lr = 1e-5f, warmup = 800;
    beta2 = 0.98f, eps = 1e-9f, weight_decay = 0.0f;
    eval_interval = 500, log_interval = 50;
  }
};

std::vector<Field> translation_fields(TranslationOptions& options);
inline std::vector<Field> fields_of(TranslationOptions& options) { return translation_fields(options); }
nlohmann::json to_json(const TranslationOptions& options);
void validate(const TranslationOptions& options);

}  // namespace potop
