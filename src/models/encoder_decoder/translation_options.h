// Everything `potop translate train` can be told: the run's options (train/run_options.h) with
// the paper's Adam and the measured recipe's schedule, the pairs and their split, the shared BPE
// vocabulary and the model.
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
  // The held-out pairs: a fraction of the file, at most so many (held_out_count). --dev-size or
  // --test-size given alone holds out exactly that many (its fraction becomes 1), as it did
  // before the fractions existed.
  double dev_fraction = 0.05, test_fraction = 0.05;
  int dev_size = 500, test_size = 1000;
  int vocab_size = 4000;  // of the shared BPE tokenizer
  std::string tokenizer;  // a tokenizer directory instead of a BPE learned from the pairs
  std::string init_from;  // fine-tuning: a model to start from (potop translate pretrain's)
  // model
  EncoderDecoderConfig model;
  // batches of about this many padded tokens, of sentences of similar lengths (not --batch-size)
  int batch_tokens = 2048;
  int eval_sentences = 200;  // dev sentences translated for BLEU and chrF at each evaluation

  // The run: the paper's Adam (beta2 0.98, eps 1e-9, no weight decay) with the schedule of
  // docs/translation.md's measured Tatoeba runs: cosine 1e-3 -> 1e-5 after 200 warm-up steps,
  // 4000 steps. (The former default, the paper's noam at factor 1 with 800 warm-up steps, peaks
  // at 3.1e-3 at width 128, where 3e-3 left the decoder ignoring its source on the toy tasks; it
  // is --lr-schedule noam --lr 1 --warmup 800.)
  TranslationOptions() {
    out = "runs/translate";
    steps = 4000;
    lr_schedule = LrShape::kCosine, lr = 1e-3f, min_lr = 1e-5f, warmup = 200;
    beta2 = 0.98f, eps = 1e-9f, weight_decay = 0.0f;
    eval_interval = 500, log_interval = 50;
  }
};

std::vector<Field> translation_fields(TranslationOptions& options);
inline std::vector<Field> fields_of(TranslationOptions& options) { return translation_fields(options); }
nlohmann::json to_json(const TranslationOptions& options);
void validate(const TranslationOptions& options);

}  // namespace potop
