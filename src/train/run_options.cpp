#include "train/run_options.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/threads.h"

namespace potop {

std::vector<Field> run_option_fields(RunOptions& o, const std::vector<std::string>& omit) {
  std::vector<Field> fields{
      {"out", "model directory to write (created if missing)", &o.out},
      {"batch-size", "sequences per micro-batch", &o.batch_size},
      {"grad-accum", "micro-batches per optimizer step", &o.grad_accum},
      {"steps", "optimizer steps", &o.steps},
      {"lr-schedule", "cosine (linear warm-up, cosine decay to --min-lr), linear (linear warm-up, linear decay to "
                      "--min-lr) or noam (the paper's warm-up, then 1/sqrt(step))",
       choice(o.lr_schedule, {{LrShape::kCosine, "cosine"}, {LrShape::kNoam, "noam"}, {LrShape::kLinear, "linear"}})},
      {"lr", "cosine: peak learning rate; noam: the factor on d^-0.5 min(step^-0.5, step warmup^-1.5)", &o.lr},
      {"min-lr", "cosine: learning rate at the end of the decay", &o.min_lr},
      {"warmup", "linear warm-up steps", &o.warmup},
      {"lr-decay-steps", "steps of the cosine decay from --lr to --min-lr (0 = --steps); resuming with more --steps "
                         "keeps the run's schedule unless this is given", &o.lr_decay_steps},
      {"beta1", "AdamW beta1", &o.beta1},
      {"beta2", "AdamW beta2", &o.beta2},
      {"eps", "AdamW epsilon", &o.eps},
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
  std::erase_if(fields, [&](const Field& f) { return std::find(omit.begin(), omit.end(), f.name) != omit.end(); });
  return fields;
}

void require_option(bool ok, const std::string& flag, const std::string& what) {
  if (!ok) throw Error("--" + flag + " " + what);
}

std::string option_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void validate(const RunOptions& o) {
  const auto require = require_option;
  const auto num = option_number;
  require(!o.out.empty(), "out", "must name a directory");
  for (auto [flag, value] : {std::pair{"batch-size", o.batch_size}, {"grad-accum", o.grad_accum}, {"steps", o.steps},
                             {"eval-interval", o.eval_interval}, {"eval-iters", o.eval_iters},
                             {"log-interval", o.log_interval}})
    require(value > 0, flag, "must be positive (got " + std::to_string(value) + ")");
  require(o.warmup >= 0, "warmup", "must be >= 0");
  require(o.lr_schedule != LrShape::kNoam || o.warmup > 0, "warmup", "must be positive with --lr-schedule noam");
  require(o.lr_decay_steps >= 0, "lr-decay-steps", "must be >= 0 (got " + std::to_string(o.lr_decay_steps) + "); 0 means --steps");
  require(o.eval_iters <= kMaxEvalIters, "eval-iters",
          "is too large (got " + std::to_string(o.eval_iters) + ", max " + std::to_string(kMaxEvalIters) + ")");
  require(std::isfinite(o.lr) && o.lr > 0, "lr", "must be a positive finite number (got " + num(o.lr) + ")");
  require(std::isfinite(o.min_lr) && o.min_lr >= 0 && (o.lr_schedule == LrShape::kNoam || o.min_lr <= o.lr), "min-lr",
          "must be finite, >= 0 and <= --lr (got " + num(o.min_lr) + ")");
  require(std::isfinite(o.beta1) && o.beta1 >= 0 && o.beta1 < 1, "beta1", "must be in [0, 1)");
  require(std::isfinite(o.beta2) && o.beta2 >= 0 && o.beta2 < 1, "beta2", "must be in [0, 1)");
  require(std::isfinite(o.eps) && o.eps > 0, "eps", "must be a positive finite number (got " + num(o.eps) + ")");
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

std::vector<std::string> apply_options_file(const std::vector<Field>& fields, const std::string& path,
                                            const std::vector<std::string>& skip) {
  const nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(path + ": expected a JSON object of training options");
  // A model directory's config.json: its "training" object holds every option the run used.
  if (j.contains("training") && j.contains("model")) return apply_options_json(fields, j["training"], path + ": training", skip);
  return apply_options_json(fields, j, path, skip);
}

std::vector<std::string> apply_options_json(const std::vector<Field>& fields, const nlohmann::json& j,
                                            const std::string& source, const std::vector<std::string>& skip) {
  if (!j.is_object()) throw Error(source + ": expected a JSON object of training options");
  return apply_json(fields, j, source, "option", skip);
}

}  // namespace potop
