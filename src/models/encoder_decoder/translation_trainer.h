// `potop translate train`: an encoder-decoder on a TSV of sentence pairs. Setup only — read and
// split the pairs, train (or restore) the shared subword tokenizer, build the model and the
// length-bucketed batches — then the run harness (run.h) does the rest, as for the GPT: progress,
// evaluation (dev loss and dev BLEU/chrF of greedy translations), checkpoints, resume, signals.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"
#include "data/parallel_corpus.h"
#include "models/encoder_decoder/encoder_decoder_config.h"
#include "train/run.h"

namespace potop {

enum class LrSchedule { kNoam, kCosine };

struct TranslationOptions {
  // data
  std::string data;
  std::string out = "runs/translate";
  std::string source = "en", target = "pl";
  std::string columns = "en,pl";  // the languages of the file's two columns
  BadLines bad_lines = BadLines::kSkip;
  int dev_size = 500, test_size = 1000;
  int vocab_size = 8000;  // of the shared BPE tokenizer
  // model
  EncoderDecoderConfig model;
  // optimisation: the paper's Adam and warm-up schedule by default
  int batch_tokens = 2048;
  int steps = 3000;
  LrSchedule schedule = LrSchedule::kNoam;
  float lr = 1.0f;  // noam: the factor on d^-0.5·min(step^-0.5, step·warmup^-1.5); cosine: the peak
  float min_lr = 1e-5f;
  int warmup = 800;
  float beta1 = 0.9f, beta2 = 0.98f, eps = 1e-9f, weight_decay = 0.0f, grad_clip = 1.0f;
  // evaluation and run
  int eval_interval = 500, eval_sentences = 200, log_interval = 50;
  uint64_t seed = 1337;
  int threads = 0;
  int keep = 0;
  bool skip_nonfinite = false;
};

std::vector<Field> translation_fields(TranslationOptions& options);
nlohmann::json to_json(const TranslationOptions& options);
void validate(const TranslationOptions& options);

// The learning rate of step (0-based).
float learning_rate(const TranslationOptions& options, int step);

struct TranslationControl {
  std::string resume;               // a model directory to continue
  std::vector<std::string> given;   // option names set on the command line
  bool force = false;
  std::function<bool(int)> stop_requested;
};

RunResult train_translation(const TranslationOptions& options, std::FILE* log, const TranslationControl& control);

}  // namespace potop
