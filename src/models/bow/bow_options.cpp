#include "models/bow/bow_options.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "models/gpt/gpt_options.h"

namespace potop {

std::vector<Field> bow_option_fields(BowOptions& o) {
  std::vector<Field> fields{
      {"data", "training text file (UTF-8)", &o.data},
      {"out", "model directory to write (created if missing)", &o.out},
      {"val-fraction", "fraction of the words, taken from the end of the text, held out for validation",
       &o.val_fraction},
      {"tokenizer", "a tokenizer directory (potop tokenizer train --kind word); default: a word tokenizer of the "
                    "text with --min-count", &o.tokenizer},
      {"min-count", "without --tokenizer: words seen fewer times in the text become <unk>", &o.min_count},
  };
  for (Field& f : bow_fields(o.model)) fields.push_back(std::move(f));
  std::vector<Field> rest{
      {"batch-size", "windows per micro-batch", &o.batch_size},
      {"grad-accum", "micro-batches per optimizer step", &o.grad_accum},
      {"steps", "optimizer steps", &o.steps},
      {"lr", "peak learning rate", &o.lr},
      {"min-lr", "learning rate at the end of the cosine decay", &o.min_lr},
      {"warmup", "linear warm-up steps", &o.warmup},
      {"lr-decay-steps", "steps of the cosine decay from --lr to --min-lr (0 = --steps)", &o.lr_decay_steps},
      {"beta1", "AdamW beta1", &o.beta1},
      {"beta2", "AdamW beta2", &o.beta2},
      {"weight-decay", "AdamW weight decay (matrices and embeddings only)", &o.weight_decay},
      {"grad-clip", "clip the global gradient norm to this (0 = off)", &o.grad_clip},
      {"eval-interval", "evaluate and checkpoint every N steps", &o.eval_interval},
      {"eval-iters", "batches per split in each evaluation", &o.eval_iters},
      {"log-interval", "steps between progress lines and metrics records", &o.log_interval},
      {"seed", "random seed (weights, batches)", &o.seed},
      {"threads", "threads to use (0 = all cores); each runs the model on its rows of the batch", &o.threads},
      {"verbose", "print the memory plan at the start", &o.verbose},
      {"keep", "also keep a resumable checkpoint every N steps, step-<N>.safetensors (0 = none)", &o.keep},
      {"skip-nonfinite", "skip a step whose loss or gradient norm is NaN or infinite instead of stopping",
       &o.skip_nonfinite},
  };
  for (Field& f : rest) fields.push_back(std::move(f));
  return fields;
}

nlohmann::json to_json(const BowOptions& options) {
  BowOptions copy = options;
  return fields_to_json(bow_option_fields(copy));
}

void apply_options_json(BowOptions& options, const nlohmann::json& j, const std::string& source,
                        const std::vector<std::string>& skip) {
  if (!j.is_object()) throw Error(source + ": expected a JSON object of options");
  apply_json(bow_option_fields(options), j, source, "option", skip);
}

void validate(const BowOptions& o) {
  auto require = [](bool ok, const std::string& message) {
    if (!ok) throw Error(message);
  };
  auto positive = [&](int v, const char* flag) {
    require(v > 0, std::string(flag) + " must be positive (got " + std::to_string(v) + ")");
  };
  require(!o.data.empty(), "--data: a training text file is required");
  require(!o.out.empty(), "--out must name a directory");
  require(std::isfinite(o.val_fraction) && o.val_fraction >= 0 && o.val_fraction < 1,
          "--val-fraction must be in [0, 1) (got " + std::to_string(o.val_fraction) + ")");
  positive(o.min_count, "--min-count");
  positive(o.model.n_embd, "--dim");
  positive(o.model.block_size, "--block-size");
  positive(o.model.attn_hidden, "--attn-hidden");
  require(o.model.block_size <= 4096, "--block-size " + std::to_string(o.model.block_size) +
                                          " is too large (max 4096: the scores are T×T per window)");
  require(o.model.n_embd <= 65536, "--dim " + std::to_string(o.model.n_embd) + " is too large (max 65536)");
  require(o.model.attn_hidden <= 65536,
          "--attn-hidden " + std::to_string(o.model.attn_hidden) + " is too large (max 65536)");
  positive(o.batch_size, "--batch-size");
  positive(o.grad_accum, "--grad-accum");
  positive(o.steps, "--steps");
  positive(o.eval_interval, "--eval-interval");
  positive(o.eval_iters, "--eval-iters");
  require(o.eval_iters <= kMaxEvalIters, "--eval-iters is too large (max " + std::to_string(kMaxEvalIters) + ")");
  positive(o.log_interval, "--log-interval");
  require(o.warmup >= 0, "--warmup must be >= 0");
  require(o.lr_decay_steps >= 0, "--lr-decay-steps must be >= 0");
  require(o.keep >= 0, "--keep must be >= 0");
  require(o.threads >= 0, "--threads must be >= 0 (0 = all cores)");
  require(std::isfinite(o.lr) && o.lr > 0, "--lr must be positive");
  require(std::isfinite(o.min_lr) && o.min_lr >= 0 && o.min_lr <= o.lr, "--min-lr must be in [0, --lr]");
  require(std::isfinite(o.beta1) && o.beta1 >= 0 && o.beta1 < 1, "--beta1 must be in [0, 1)");
  require(std::isfinite(o.beta2) && o.beta2 >= 0 && o.beta2 < 1, "--beta2 must be in [0, 1)");
  require(std::isfinite(o.weight_decay) && o.weight_decay >= 0, "--weight-decay must be >= 0");
  require(std::isfinite(o.grad_clip) && o.grad_clip >= 0, "--grad-clip must be >= 0 (0 = off)");
}

}  // namespace potop
