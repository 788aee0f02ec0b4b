#include "train/run.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <system_error>

#include "core/dir_lock.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/profile.h"
#include "core/threads.h"
#include "tokenizer/tokenizer.h"
#include "train/progress.h"
#include "train/resume.h"

namespace potop {

namespace {

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

RunResult run_training(const RunSettings& settings, const RunJob& job, TrainState state, bool resuming,
                       std::FILE* log) {
  const fs::path& out = settings.out;
  if (settings.writes) {
    if (const int n = remove_stale_temporaries(out); n > 0)
      std::fprintf(log, "removed %d temporary file%s left by an interrupted write\n", n, n == 1 ? "" : "s");
    if (resuming) truncate_metrics(out / "metrics.jsonl", state.step, state.eval_pending);
    else write_file_atomic(out / "metrics.jsonl", std::string_view{});
  }
  std::optional<MetricsLog> metrics_log;
  if (settings.writes) metrics_log.emplace((out / "metrics.jsonl").string());
  auto write_metrics = [&](const nlohmann::json& record) {
    if (metrics_log) metrics_log->write(record);
  };

  RunResult result{state.train_loss, state.val_loss, state.best_score, 0, 0, 0, false, state.nonfinite_skipped};
  Progress progress(settings.steps, log);
  const double elapsed_before = state.elapsed_s;
  const int start = resuming ? state.step : 0;
  int stale = state.stale_evaluations;  // evaluations since the best score
  bool said_no_val = false;
  int checkpoint_step = resuming ? start : -1;
  auto elapsed = [&] { return elapsed_before + progress.elapsed_seconds(); };
  // latest.safetensors, best.safetensors when the score improved, a step-<N> snapshot with
  // keep, and the state (resume.safetensors) last: until that rename, the previous state stays
  // the one to resume from, and everything written before it is rewritten identically on resume.
  auto write_checkpoint = [&](int step, const Metadata& meta, bool best, bool eval_pending) {
    job.save_weights(out / "latest.safetensors", meta);
    if (best) job.save_weights(out / "best.safetensors", meta);
    state.step = step, state.eval_pending = eval_pending;
    state.best_score = result.best_val_loss, state.train_loss = result.final_train_loss;
    state.val_loss = result.final_val_loss, state.nonfinite_skipped = result.nonfinite_skipped;
    state.stale_evaluations = stale;
    state.threads = get_threads(), state.elapsed_s = elapsed();
    if (settings.keep > 0 && step > 0 && step % settings.keep == 0) job.save_state(out / snapshot_file(step), state);
    job.save_state(out / kResumeFile, state);
  };
  auto checkpoint = [&](int step, const Metadata& meta, bool best, bool eval_pending = false) {
    if (!settings.writes) {
      checkpoint_step = step;
      return;
    }
    // A new run's first checkpoint appears whole or not at all: weights without the state would
    // be neither resumable nor a run stopped before its first checkpoint.
    std::optional<FileGroup> first;
    if (checkpoint_step < 0) first.emplace();
    try {
      write_checkpoint(step, meta, best, eval_pending);
      if (first) first->commit();
    } catch (const Error& e) {
      if (!first) throw;
      throw Error(std::string(e.what()) + "; the run has no checkpoint, so there is nothing to resume: start it "
                  "again with " + settings.command + " --out " + out.string() + " --force");
    }
    checkpoint_step = step;
  };

  // tokens/s of the steps since the previous train record, timed around the steps alone
  long interval_tokens = 0;
  double interval_seconds = 0;
  const bool pending = resuming && state.eval_pending;  // the resumed state's evaluation was abandoned
  auto stop_at = [&](int step) { return job.stop_requested && job.stop_requested(step); };
  // Stops the run at `step` with a checkpoint; eval_pending: the evaluation due at `step` has not
  // been done (stopped before or during it), so a resumed run does it first.
  auto interrupt = [&](int step, bool eval_pending) {
    if (checkpoint_step != step) checkpoint(step, {{"step", std::to_string(step)}}, false, eval_pending);
    progress.finish_line();
    std::fprintf(log, "interrupted at step %d of %d%s; checkpoint saved to %s\nresume with: %s --resume %s\n", step,
                 settings.steps, eval_pending ? ", before its evaluation" : "", (out / kResumeFile).string().c_str(),
                 settings.command.c_str(), out.string().c_str());
    result.interrupted = true;
    result.steps_done = step;
  };
  for (int step = start;; ++step) {
    const bool last = step == settings.steps;
    // A resumed run's first step was evaluated before (unless that evaluation was abandoned).
    const bool fresh = !(resuming && step == start) || pending;
    const bool eval_due = fresh && (step % settings.eval_interval == 0 || last);
    if (eval_due) {
      // A stop request before or during the evaluation wins over it: an evaluation can be long.
      const std::optional<Evaluation> evaluated =
          stop_at(step) ? std::nullopt : job.evaluate(step, [&] { return stop_at(step); });
      if (!evaluated) {
        interrupt(step, /*eval_pending=*/true);
        break;
      }
      const Evaluation& e = *evaluated;
      const bool has_val = !std::isnan(e.val_loss);
      progress.finish_line();
      // No validation split (--val-fraction 0): no "val loss nan"; the best is picked by train loss.
      std::fprintf(log, "eval step %d: train loss %.4f", step, e.train_loss);
      if (has_val) std::fprintf(log, ", val loss %.4f", e.val_loss);
      else if (!said_no_val) std::fprintf(log, " (no validation split: the best checkpoint is picked by train loss)");
      said_no_val = true;
      for (const auto& [name, value] : e.extra) std::fprintf(log, ", %s %.2f", name.c_str(), value);
      std::fprintf(log, "\n");
      nlohmann::json record = {{"kind", "eval"}, {"step", step}, {"train_loss", e.train_loss},
                               {"val_loss", has_val ? nlohmann::json(e.val_loss) : nlohmann::json(nullptr)}};
      for (const auto& [name, value] : e.extra) record[name] = value;
      record["elapsed_s"] = elapsed();
      write_metrics(record);
      const float score = !std::isnan(e.selection) ? e.selection : has_val ? e.val_loss : e.train_loss;
      const bool best = score < result.best_val_loss;
      if (best) result.best_val_loss = score;
      stale = best ? 0 : stale + 1;
      result.final_train_loss = e.train_loss, result.final_val_loss = e.val_loss;
      Metadata meta{{"step", std::to_string(step)}, {"train_loss", std::to_string(e.train_loss)}};
      if (has_val) meta["val_loss"] = std::to_string(e.val_loss);
      if (!std::isnan(e.selection)) meta["score"] = std::to_string(e.selection);  // what picks the best (lower is better)
      checkpoint(step, meta, best);
    } else if (fresh && settings.keep > 0 && step % settings.keep == 0) {
      checkpoint(step, {{"step", std::to_string(step)}}, false);
    }
    if (last) break;
    if (settings.patience > 0 && stale >= settings.patience) {  // also on resuming a run that stopped so
      progress.finish_line();
      std::fprintf(log, "early stop at step %d of %d: %d evaluation%s without a better score (--patience %d); the "
                   "best checkpoint is %s\n", step, settings.steps, stale, stale == 1 ? "" : "s", settings.patience,
                   (out / "best.safetensors").string().c_str());
      result.early_stopped = true;
      result.steps_done = step;
      break;
    }
    if (stop_at(step)) {
      interrupt(step, /*eval_pending=*/false);
      break;
    }

    const auto started = std::chrono::steady_clock::now();
    const StepResult r = job.step(step);
    interval_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    interval_tokens += settings.tokens_per_step;
    if (!r.applied) {
      progress.finish_line();
      const std::string what = "the loss (" + number(r.loss) + ") or the gradient norm (" + number(r.grad_norm) +
                               ") is not finite";
      if (!settings.skip_nonfinite)
        throw Error("step " + std::to_string(step + 1) + ": " + what + "; training stopped. The last good checkpoint is " +
                    (out / kResumeFile).string() + " (step " + std::to_string(checkpoint_step) +
                    "): resume from it with a lower learning rate (" + settings.command + " --resume " + out.string() +
                    " --lr <lower>), or pass --skip-nonfinite to skip such steps");
      ++result.nonfinite_skipped;
      std::fprintf(log, "step %d: %s; step skipped (--skip-nonfinite; %d so far)\n", step + 1, what.c_str(),
                   result.nonfinite_skipped);
      write_metrics({{"kind", "skipped"}, {"step", step + 1}, {"loss", r.loss}, {"grad_norm", r.grad_norm}});
      continue;
    }
    progress.update(step + 1, r.loss, r.lr, settings.tokens_per_step);
    if ((step + 1) % settings.log_interval == 0 || step + 1 == settings.steps) {
      write_metrics({{"kind", "train"}, {"step", step + 1}, {"loss", r.loss}, {"lr", r.lr}, {"grad_norm", r.grad_norm},
                     {"tokens_per_s", interval_seconds > 0 ? interval_tokens / interval_seconds : 0.0},
                     {"elapsed_s", elapsed()}});
      interval_tokens = 0, interval_seconds = 0;
    }
  }
  progress.finish_line();
  if (settings.profile) profile::print(log);
  result.tokens_per_second = progress.tokens_per_second();
  result.seconds = progress.elapsed_seconds();
  if (result.interrupted) return result;
  if (!result.early_stopped) result.steps_done = settings.steps;
  if (result.nonfinite_skipped > 0)
    std::fprintf(log, "skipped %d step%s with a non-finite loss or gradient norm (--skip-nonfinite)\n",
                 result.nonfinite_skipped, result.nonfinite_skipped == 1 ? "" : "s");
  if (resuming && start == settings.steps)
    std::fprintf(log, "the run in %s already finished at step %d; pass --steps N to train further\n",
                 out.string().c_str(), start);
  else
    std::fprintf(log, "done in %s; model saved to %s\n", Progress::format_duration(result.seconds).c_str(),
                 out.string().c_str());
  return result;
}

void truncate_metrics(const fs::path& metrics, int step, bool eval_pending) {
  std::error_code ec;
  if (!fs::exists(metrics, ec)) return;
  const std::string text = read_file(metrics);
  std::string kept;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t end = text.find('\n', begin);
    if (end == std::string::npos) break;  // a line without its newline was cut short
    const std::string_view line(text.data() + begin, end - begin);
    begin = end + 1;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) continue;
    const auto s = j.find("step");
    if (s != j.end() && (!s->is_number_integer() || s->get<int64_t>() > step)) continue;
    // A pending evaluation is done again: a record of it (from a run that wrote it and then lost
    // its checkpoint) goes too.
    if (eval_pending && s != j.end() && s->get<int64_t>() == step && j.value("kind", "") == "eval") continue;
    kept.append(line).push_back('\n');
  }
  if (kept != text) write_file_atomic(metrics, kept);
}

int remove_stale_temporaries(const fs::path& dir) {
  std::error_code ec;
  int removed = 0;
  const std::vector<std::string> tokenizer_files = all_tokenizer_files();
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t tmp = name.rfind(".tmp-");
    if (tmp == std::string::npos) continue;
    const std::string base = name.substr(0, tmp), pid_text = name.substr(tmp + 5);
    const bool ours = base == "config.json" || base == "metrics.jsonl" || base == "latest.safetensors" ||
                      base == "best.safetensors" || base == kResumeFile ||
                      std::find(tokenizer_files.begin(), tokenizer_files.end(), base) != tokenizer_files.end() ||
                      (base.starts_with("step-") && base.ends_with(".safetensors"));
    long pid = 0;
    const auto [end, perr] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
    if (!ours || perr != std::errc() || end != pid_text.data() + pid_text.size() || pid <= 0) continue;
    if (pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) == 0) continue;  // its writer still runs
    if (fs::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

std::vector<fs::path> run_files_in(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  std::vector<std::string> names = all_tokenizer_files();
  names.insert(names.end(), {"config.json", "metrics.jsonl", "latest.safetensors", "best.safetensors", kResumeFile});
  for (const std::string& name : names)
    if (fs::exists(dir / name, ec)) found.push_back(dir / name);
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("step-") && name.ends_with(".safetensors")) found.push_back(entry.path());
  }
  return found;
}

std::vector<fs::path> previous_run_files(const fs::path& out, bool force) {
  std::vector<fs::path> previous = run_files_in(out);
  if (!previous.empty() && !force) {
    DirectoryLock::refuse_in_use(out);  // a run in its first evaluation has no checkpoint yet
    std::string files;
    bool checkpoint = false;
    for (const fs::path& f : previous) {
      files += (files.empty() ? "" : ", ") + f.filename().string();
      checkpoint = checkpoint || f.extension() == ".safetensors";
    }
    std::error_code ec;
    if (!checkpoint)  // config.json and metrics.jsonl alone: a run that ended before its first checkpoint
      throw Error("--out " + out.string() + " holds a run that ended before its first checkpoint (" + files +
                  ": it was stopped, or writing the checkpoint failed): nothing to resume; start it again with "
                  "--force, or choose another --out");
    if (const std::string from = imported_from(out); !from.empty())
      throw Error("--out " + out.string() + " holds a model imported by potop import (from " + from + "); fine-tune "
                  "it with --init-from " + out.string() + " and another --out (--force would delete it)");
    if (!fs::exists(out / kResumeFile, ec))  // weights alone: --resume would be refused
      throw Error("--out " + out.string() + " already holds a model that cannot be resumed (" + files + ", no " +
                  kResumeFile + "); replace it with --force, or choose another --out");
    throw Error("--out " + out.string() + " already holds a model (" + files + "); continue it with --resume " +
                out.string() + ", replace it with --force, or choose another --out");
  }
  return previous;
}

}  // namespace potop
