#include "train/trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "checkpoint/model_dir.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/profile.h"
#include "core/hash.h"
#include "core/threads.h"
#include "data/dataset.h"
#include "data/text_file.h"
#include "kernels/gemm.h"
#include "model/batch_parallel.h"
#include "train/adamw.h"
#include "train/memory_check.h"
#include "train/progress.h"
#include "train/schedule.h"
#include "train/train_state.h"

namespace potop {

namespace {

// Mean loss over `iters` batches drawn with a fixed seed, so every evaluation of a run scores
// the same windows and the curve shows the model changing, not the sample.
float estimate_loss(BatchParallel& model, std::span<const int> tokens, int B, int T, int iters, uint64_t seed,
                    std::vector<int>& x, std::vector<int>& y) {
  BatchSampler sampler(tokens, B, T, seed);
  double sum = 0;
  for (int i = 0; i < iters; ++i) {
    sampler.next(x.data(), y.data());
    sum += model.forward(x.data(), y.data(), B, T, /*training=*/false);
  }
  return static_cast<float>(sum / iters);
}

void print_memory_plan(std::FILE* log, const BatchParallel& model, const AdamW& optimizer) {
  size_t total = optimizer.bytes();
  std::fprintf(log, "memory plan:\n");
  for (const auto& [name, bytes] : model.memory_plan()) {
    std::fprintf(log, "  %-26s %12s\n", name.c_str(), format_bytes(bytes).c_str());
    total += bytes;
  }
  std::fprintf(log, "  %-26s %12s\n", "AdamW moments (m, v)", format_bytes(optimizer.bytes()).c_str());
  std::fprintf(log, "  %-26s %12s\n", "total", format_bytes(total).c_str());
}

std::string snapshot_name(int step) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "step-%06d.safetensors", step);
  return buf;
}

}  // namespace

TrainResult train(const TrainOptions& requested, std::FILE* log, const TrainControl& control) {
  // A resumed run starts from the checkpoint's options; flags the user gave override them.
  const bool resuming = !control.resume.empty();
  std::optional<SafetensorsFile> state_file;
  TrainState state;
  TrainOptions options = requested;
  std::vector<std::string> changes;
  fs::path resume_dir;
  if (resuming) {
    state_file.emplace(resolve_resume_path(control.resume, resume_dir));
    state = read_train_state(*state_file);
    options = resume_options(state, requested, control.given, resume_dir, control.allow_data_change, changes);
  }
  validate(options);
  set_threads(options.threads > 0 ? options.threads : hardware_threads());
  profile::enable(options.profile);
  const fs::path out = options.out;

  // Data: text -> code points -> ids -> train/val split. A resumed run keeps its vocabulary.
  const bool data_given = std::find(control.given.begin(), control.given.end(), "data") != control.given.end();
  if (resuming && !data_given && !fs::exists(options.data))
    throw Error("--resume " + resume_dir.string() + ": the training text " + options.data +
                " named by the checkpoint is not found (a path relative to where the run started?); pass --data");
  const std::u32string text = read_utf8_file(options.data);
  const uint64_t data_hash = hash_training_text(text);
  CharTokenizer tokenizer;
  if (resuming) {
    if (data_hash != state.data_hash && !control.allow_data_change)
      throw Error("--data " + options.data + ": differs from the text the run in " + out.string() +
                  " was trained on (hash " + hash_hex(data_hash) + ", the checkpoint has " + hash_hex(state.data_hash) +
                  " from " + state.options.value("data", std::string("?")) +
                  "); pass --allow-data-change to continue on this text");
    tokenizer = CharTokenizer::load(out / "vocab.json");
    if (tokenizer.hash() != state.vocab_hash)
      throw Error((out / "vocab.json").string() + ": does not match the vocabulary of " + state_file->path() +
                  " (hash " + hash_hex(tokenizer.hash()) + " vs " + hash_hex(state.vocab_hash) + ")");
  } else {
    tokenizer = CharTokenizer::from_text(text);
  }
  const std::vector<int> tokens = tokenizer.encode(text, options.data);
  const TokenSplit split = split_tokens(tokens, options.val_fraction, options.block_size, options.data);
  const bool has_val = !split.val.empty();
  ensure_writable_directory(out);

  const GPTConfig config = options.model_config(tokenizer.size());
  config.validate("model");
  if (resuming && to_json(config) != state.config)
    throw Error(state_file->path() + ": its model config " + state.config.dump() + " does not match " +
                to_json(config).dump());
  const int B = options.batch_size, T = options.block_size;
  const int replicas = options.parallel == "batch" ? std::min(get_threads(), B) : 1;
  check_training_fits(config, B, T, replicas);
  GPT model(config);
  if (!resuming) model.init_weights(options.seed);
  BatchParallel parallel(model, replicas);
  parallel.reserve(B, T);
  parallel.zero_grad();
  AdamW optimizer(model.layout(), {options.lr, options.beta1, options.beta2, 1e-8f, options.weight_decay});
  BatchSampler sampler(split.train, B, T, hash64(options.seed, 1));
  if (resuming) {
    load_train_state_tensors(*state_file, model, optimizer.m(), optimizer.v());
    optimizer.set_steps_taken(state.adam_steps);
    sampler.set_state(state.sampler);
    state_file.reset();  // the tensors are copied; free the file's bytes
  }

  std::fprintf(log, "data: %s: %zu characters, vocabulary %d, train %zu / val %zu tokens\n", options.data.c_str(),
               text.size(), tokenizer.size(), split.train.size(), split.val.size());
  std::fprintf(log, "model: %d layers, %d heads, %d wide, block %d, %s-LN, %s, %s positions: %zu parameters\n",
               config.n_layer, config.n_head, config.n_embd, config.block_size, to_string(config.norm).c_str(),
               to_string(config.activation).c_str(), to_string(config.positions).c_str(), model.num_parameters());
  const std::string threading =
      replicas > 1 ? std::to_string(replicas) + " running the model side by side on " +
                         (B % replicas ? "about " : "") + std::to_string(B / replicas) + " rows of the batch each"
                   : "each kernel split over them";
  std::fprintf(log, "threads: %d, %s (--parallel %s), GEMM: %s\n", get_threads(), threading.c_str(),
               options.parallel.c_str(), blas_name());
  print_memory_plan(log, parallel, optimizer);
  if (const int n = remove_stale_temporaries(out); n > 0)
    std::fprintf(log, "removed %d temporary file%s left by an interrupted write\n", n, n == 1 ? "" : "s");
  if (resuming) {
    std::fprintf(log, "resuming %s at step %d of %d\n", out.string().c_str(), state.step, options.steps);
    for (const std::string& c : changes)
      std::fprintf(log, "note: %s: the losses will differ from an uninterrupted run\n", c.c_str());
    if (data_hash != state.data_hash) std::fprintf(log, "note: continuing on a different text (--allow-data-change)\n");
    if (state.threads != get_threads())
      std::fprintf(log, "note: the run used %d threads and now uses %d: losses will not be bit-identical to an "
                   "uninterrupted run\n", state.threads, get_threads());
    truncate_metrics(out / "metrics.jsonl", state.step);
  } else {
    if (fs::exists(out / kResumeFile))
      std::fprintf(log, "note: %s held a previous run; starting a new one over it (use --resume to continue a run)\n",
                   out.string().c_str());
    write_file_atomic(out / "metrics.jsonl", std::string_view{});
  }

  save_model_files(out, config, tokenizer, to_json(options));
  MetricsLog metrics((out / "metrics.jsonl").string());
  const LRSchedule schedule{options.lr, options.min_lr, options.warmup, options.steps};
  const uint64_t eval_seed = hash64(options.seed, 2), dropout_seed = hash64(options.seed, 3);
  std::vector<int> x(size_t(B) * T), y(size_t(B) * T);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  TrainResult result{state.train_loss, state.val_loss, state.best_score, 0, 0};
  result.nonfinite_skipped = state.nonfinite_skipped;
  Progress progress(options.steps, log);
  float loss = nan;

  // The state saved with each checkpoint: everything but the tensors is filled in here.
  state.data_hash = data_hash, state.vocab_hash = tokenizer.hash();
  state.options = to_json(options), state.config = to_json(config);
  const double elapsed_before = state.elapsed_s;
  const int start = resuming ? state.step : 0;
  int checkpoint_step = resuming ? start : -1;
  auto elapsed = [&] { return elapsed_before + progress.elapsed_seconds(); };
  // latest.safetensors, best.safetensors when the score improved, a step-<N> snapshot with
  // --keep, and resume.safetensors last: until that rename, the previous state stays the one
  // to resume from, and everything written before it is rewritten identically on resume.
  auto checkpoint = [&](int step, const Metadata& meta, bool best) {
    save_weights(out / "latest.safetensors", model, tokenizer, meta);
    if (best) save_weights(out / "best.safetensors", model, tokenizer, meta);
    state.step = step, state.adam_steps = optimizer.steps_taken(), state.sampler = sampler.state();
    state.best_score = result.best_val_loss, state.train_loss = result.final_train_loss;
    state.val_loss = result.final_val_loss, state.nonfinite_skipped = result.nonfinite_skipped;
    state.threads = get_threads(), state.elapsed_s = elapsed();
    if (options.keep > 0 && step > 0 && step % options.keep == 0)
      save_train_state(out / snapshot_name(step), model, optimizer.m(), optimizer.v(), state);
    save_train_state(out / kResumeFile, model, optimizer.m(), optimizer.v(), state);
    checkpoint_step = step;
  };

  for (int step = start;; ++step) {
    const bool last = step == options.steps;
    const bool fresh = !(resuming && step == start);  // a resumed run's first step was evaluated before
    if (fresh && (step % options.eval_interval == 0 || last)) {
      const float train_loss = estimate_loss(parallel, split.train, B, T, options.eval_iters, eval_seed, x, y);
      const float val_loss =
          has_val ? estimate_loss(parallel, split.val, B, T, options.eval_iters, eval_seed, x, y) : nan;
      progress.finish_line();
      std::fprintf(log, "eval step %d: train loss %.4f, val loss %.4f\n", step, train_loss, val_loss);
      metrics.write({{"kind", "eval"}, {"step", step}, {"train_loss", train_loss},
                     {"val_loss", has_val ? nlohmann::json(val_loss) : nlohmann::json(nullptr)},
                     {"elapsed_s", elapsed()}});
      const float score = has_val ? val_loss : train_loss;
      const bool best = score < result.best_val_loss;
      if (best) result.best_val_loss = score;
      result.final_train_loss = train_loss, result.final_val_loss = val_loss;
      checkpoint(step, {{"step", std::to_string(step)}, {"train_loss", std::to_string(train_loss)},
                        {"val_loss", std::to_string(val_loss)}}, best);
    } else if (fresh && options.keep > 0 && step % options.keep == 0) {
      checkpoint(step, {{"step", std::to_string(step)}}, false);
    }
    if (last) break;
    if (control.stop_requested && control.stop_requested(step)) {
      if (checkpoint_step != step) checkpoint(step, {{"step", std::to_string(step)}}, false);
      progress.finish_line();
      std::fprintf(log, "interrupted at step %d of %d; checkpoint saved to %s\nresume with: potop train --resume %s\n",
                   step, options.steps, (out / kResumeFile).string().c_str(), out.string().c_str());
      result.interrupted = true;
      result.steps_done = step;
      break;
    }

    const float lr = schedule.at(step);
    const profile::Scope step_scope("step");  // --profile: what runs from here to the next step
    parallel.zero_grad();
    double step_loss = 0;
    for (int micro = 0; micro < options.grad_accum; ++micro) {
      sampler.next(x.data(), y.data());
      const uint64_t seed = hash64(dropout_seed, uint64_t(step) * options.grad_accum + micro);
      step_loss += parallel.forward(x.data(), y.data(), B, T, /*training=*/true, seed);
      parallel.backward(1.0f / options.grad_accum);
    }
    parallel.reduce_grads();
    loss = static_cast<float>(step_loss / options.grad_accum);
    const double grad_norm = options.grad_clip > 0
                                 ? clip_grad_norm(model.grads().data(), model.grads().floats(), options.grad_clip)
                                 : global_norm(model.grads().data(), model.grads().floats());
    if (!std::isfinite(loss) || !std::isfinite(grad_norm)) {
      progress.finish_line();
      auto text = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", v);
        return std::isnan(v) ? std::string("NaN") : std::string(buf);
      };
      const std::string what = "the loss (" + text(loss) + ") or the gradient norm (" + text(grad_norm) + ") is not finite";
      if (!options.skip_nonfinite)
        throw Error("step " + std::to_string(step + 1) + ": " + what + "; training stopped. The last good checkpoint is " +
                    (out / kResumeFile).string() + " (step " + std::to_string(checkpoint_step) +
                    "): resume from it with a lower learning rate (potop train --resume " + out.string() +
                    " --lr <lower>), or pass --skip-nonfinite to skip such steps");
      ++result.nonfinite_skipped;
      std::fprintf(log, "step %d: %s; step skipped (--skip-nonfinite; %d so far)\n", step + 1, what.c_str(),
                   result.nonfinite_skipped);
      metrics.write({{"kind", "skipped"}, {"step", step + 1}, {"loss", loss}, {"grad_norm", grad_norm}});
      continue;
    }
    optimizer.step(model, lr);
    progress.update(step + 1, loss, lr, long(B) * T * options.grad_accum);
    if ((step + 1) % options.log_interval == 0 || step + 1 == options.steps) {
      metrics.write({{"kind", "train"}, {"step", step + 1}, {"loss", loss}, {"lr", lr}, {"grad_norm", grad_norm},
                     {"tokens_per_s", progress.tokens_per_second()}, {"elapsed_s", elapsed()}});
    }
  }
  progress.finish_line();
  if (options.profile) profile::print(log);
  result.tokens_per_second = progress.tokens_per_second();
  result.seconds = progress.elapsed_seconds();
  if (result.interrupted) return result;
  result.steps_done = options.steps;
  if (result.nonfinite_skipped > 0)
    std::fprintf(log, "skipped %d step%s with a non-finite loss or gradient norm (--skip-nonfinite)\n",
                 result.nonfinite_skipped, result.nonfinite_skipped == 1 ? "" : "s");
  if (resuming && start == options.steps)
    std::fprintf(log, "the run in %s already finished at step %d; pass --steps N to train further\n",
                 out.string().c_str(), start);
  else
    std::fprintf(log, "done in %s; model saved to %s\n", Progress::format_duration(result.seconds).c_str(),
                 out.string().c_str());
  return result;
}

}  // namespace potop
