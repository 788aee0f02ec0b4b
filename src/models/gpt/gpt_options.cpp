#include "models/gpt/gpt_options.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/threads.h"

namespace potop {

std::vector<Field> option_fields(TrainOptions& o) {
  std::vector<Field> fields{
      {"data", "training text file (UTF-8)", &o.data},
      {"out", "model directory to write (created if missing)", &o.out},
      {"val-fraction", "fraction of the text, taken from its end, held out for validation", &o.val_fraction},
      {"unknown", "characters the vocabulary lacks, in a text a resumed or fine-tuned run trains on: error, skip or "
                  "replace (by a space, or the first character)", unknown_choice(o.unknown)},
      {"tokenizer", "a tokenizer directory (potop tokenizer train); default: one token per character of the text",
       &o.tokenizer},
      {"init-from", "fine-tune: start from this model's weights and tokenizer (a model directory or .safetensors), "
                    "with a new optimizer and schedule", &o.init_from},
      {"init-embeddings", "with a word --tokenizer: start the token embeddings from these word2vec vectors (a "
                          "potop word2vec directory or a vectors .bin/.txt file, dimension n-embd)",
       &o.init_embeddings},
  };
  for (Field& f : gpt_fields(o.model)) fields.push_back(std::move(f));
  std::vector<Field> rest{
      {"batch-size", "sequences per micro-batch", &o.batch_size},
      {"grad-accum", "micro-batches per optimizer step", &o.grad_accum},
      {"steps", "optimizer steps", &o.steps},
      {"lr", "peak learning rate", &o.lr},
      {"min-lr", "learning rate at the end of the cosine decay", &o.min_lr},
      {"warmup", "linear warm-up steps", &o.warmup},
      {"lr-decay-steps", "steps of the cosine decay from --lr to --min-lr (0 = --steps); resuming with more --steps "
                         "keeps the run's schedule unless this is given", &o.lr_decay_steps},
      {"beta1", "AdamW beta1", &o.beta1},
      {"beta2", "AdamW beta2", &o.beta2},
      {"weight-decay", "AdamW weight decay (matrices and embeddings only)", &o.weight_decay},
      {"grad-clip", "clip the global gradient norm to this (0 = off)", &o.grad_clip},
      {"eval-interval", "evaluate and checkpoint every N steps", &o.eval_interval},
      {"eval-iters", "batches per split in each evaluation", &o.eval_iters},
      {"log-interval", "steps between progress lines and metrics records", &o.log_interval},
      {"seed", "random seed (weights, batches, dropout)", &o.seed},
      {"threads", "threads to use (0 = all cores)", &o.threads},
      {"parallel", "how threads share a step: batch (each runs the model on its rows of the batch) or kernel "
                   "(all run each kernel)", &o.parallel},
      {"profile", "print a per-kernel breakdown of the step time at the end", &o.profile},
      {"verbose", "print the memory plan, tensor by tensor kind, at the start", &o.verbose},
      {"keep", "also keep a resumable checkpoint every N steps, step-<N>.safetensors (0 = none)", &o.keep},
      {"skip-nonfinite", "skip a step whose loss or gradient norm is NaN or infinite instead of stopping",
       &o.skip_nonfinite},
      {"mpi-bucket-mb", "under mpirun: send the gradients in buckets of this many MB as the backward pass finishes "
                        "them, overlapping the exchange with it (0 = one exchange after the backward pass)",
       &o.mpi_bucket_mb},
      {"mpi-timeout", "under mpirun: seconds a rank waits for the others in an exchange before it stops the whole "
                      "run (0 = forever)", &o.mpi_timeout},
  };
  for (Field& f : rest) fields.push_back(std::move(f));
  return fields;
}

GPTConfig TrainOptions::model_config(int vocab_size) const {
  GPTConfig c = model;
  c.vocab_size = vocab_size;
  return c;
}

std::vector<std::string> apply_config_file(TrainOptions& options, const std::string& path,
                                           const std::vector<std::string>& skip) {
  const nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(path + ": expected a JSON object of training options");
  // A model directory's config.json: its "training" object holds every option the run used.
  if (j.contains("training") && j.contains("model")) return apply_options_json(options, j["training"], path + ": training", skip);
  return apply_options_json(options, j, path, skip);
}

std::vector<std::string> apply_options_json(TrainOptions& options, const nlohmann::json& j, const std::string& path,
                                            const std::vector<std::string>& skip) {
  if (!j.is_object()) throw Error(path + ": expected a JSON object of training options");
  return apply_json(option_fields(options), j, path, "option", skip);
}

nlohmann::json to_json(const TrainOptions& options) {
  TrainOptions copy = options;
  return fields_to_json(option_fields(copy));
}

namespace {

void require(bool ok, const std::string& flag, const std::string& what) {
  if (!ok) throw Error("--" + flag + " " + what);
}
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

void validate(const TrainOptions& o) {
  require(!o.data.empty(), "data", "is required (a UTF-8 text file to train on)");
  require(!o.out.empty(), "out", "must name a directory");
  require(o.tokenizer.empty() || o.init_from.empty(), "tokenizer",
          "does not go with --init-from, which brings the model's own tokenizer");
  require(o.init_embeddings.empty() || o.init_from.empty(), "init-embeddings",
          "does not go with --init-from, which brings the model's own weights");
  require(std::isfinite(o.val_fraction) && o.val_fraction >= 0 && o.val_fraction < 1, "val-fraction",
          "must be in [0, 1) (got " + num(o.val_fraction) + ")");
  const GPTConfig& m = o.model;
  for (auto [flag, value] : {std::pair{"n-layer", m.n_layer}, {"n-head", m.n_head}, {"n-embd", m.n_embd},
                             {"block-size", m.block_size}, {"batch-size", o.batch_size}, {"grad-accum", o.grad_accum},
                             {"steps", o.steps}, {"eval-interval", o.eval_interval}, {"eval-iters", o.eval_iters},
                             {"log-interval", o.log_interval}})
    require(value > 0, flag, "must be positive (got " + std::to_string(value) + ")");
  require(m.n_embd % m.n_head == 0, "n-embd",
          std::string("(") + std::to_string(m.n_embd) + ") must be divisible by --n-head (" + std::to_string(m.n_head) + ")");
  require(m.block_size <= 65536, "block-size", "is too large (max 65536)");
  require(m.n_embd <= 65536, "n-embd", "is too large (max 65536)");
  require(m.n_layer <= 1024, "n-layer", "is too large (max 1024)");
  require(o.warmup >= 0, "warmup", "must be >= 0");
  require(o.lr_decay_steps >= 0, "lr-decay-steps", "must be >= 0 (got " + std::to_string(o.lr_decay_steps) + "); 0 means --steps");
  require(o.eval_iters <= kMaxEvalIters, "eval-iters",
          "is too large (got " + std::to_string(o.eval_iters) + ", max " + std::to_string(kMaxEvalIters) + ")");
  require(std::isfinite(m.dropout) && m.dropout >= 0 && m.dropout < 1, "dropout", "must be in [0, 1) (got " + num(m.dropout) + ")");
  require(std::isfinite(o.lr) && o.lr > 0, "lr", "must be a positive finite number (got " + num(o.lr) + ")");
  require(std::isfinite(o.min_lr) && o.min_lr >= 0 && o.min_lr <= o.lr, "min-lr",
          "must be finite, >= 0 and <= --lr (got " + num(o.min_lr) + ")");
  require(std::isfinite(o.beta1) && o.beta1 >= 0 && o.beta1 < 1, "beta1", "must be in [0, 1)");
  require(std::isfinite(o.beta2) && o.beta2 >= 0 && o.beta2 < 1, "beta2", "must be in [0, 1)");
  require(std::isfinite(o.weight_decay) && o.weight_decay >= 0, "weight-decay", "must be finite and >= 0");
  require(std::isfinite(o.grad_clip) && o.grad_clip >= 0, "grad-clip", "must be finite and >= 0 (0 disables clipping)");
  check_threads_flag(o.threads);
  require(o.parallel == "batch" || o.parallel == "kernel", "parallel",
          "must be 'batch' or 'kernel' (got '" + o.parallel + "')");
  require(std::isfinite(o.mpi_bucket_mb) && o.mpi_bucket_mb >= 0 && o.mpi_bucket_mb <= 1e6, "mpi-bucket-mb",
          "must be in [0, 1000000] (got " + num(o.mpi_bucket_mb) + "); 0 exchanges after the backward pass");
  require(std::isfinite(o.mpi_timeout) && o.mpi_timeout >= 0, "mpi-timeout",
          "must be a number of seconds >= 0 (got " + num(o.mpi_timeout) + "); 0 waits forever");
  require(o.keep >= 0, "keep", "must be >= 0 (got " + std::to_string(o.keep) + "); 0 keeps only latest and best");
}

}  // namespace potop
