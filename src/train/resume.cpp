#include "train/resume.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <system_error>

#include "checkpoint/weights.h"
#include "core/dir_lock.h"
#include "core/error.h"
#include "core/file_io.h"

namespace potop {

namespace {

// What --steps N does to the rate of a resumed run of `had` steps that keeps its schedule, resumed
// at step `from`: told in the rates it will use (its decay ends at run.decay_steps()), for a
// longer or a shorter run, still warming up or not.
std::string kept_schedule_note(const RunOptions& run, int from, int had) {
  const int end = run.decay_steps();
  const std::string n = std::to_string(run.steps), e = std::to_string(end), w = std::to_string(run.warmup);
  const std::string min_lr = "--min-lr " + option_number(run.min_lr);
  const std::string last = option_number(run.schedule(1).at(run.steps - 1));
  std::string note = "--steps " + n + " (the run had " + std::to_string(had) + "): the learning rate keeps the run's "
                     "schedule: ";
  if (from < run.warmup) {
    note += "it is still warming up (to --lr " + option_number(run.lr) + " at step " + w + ")";
    if (run.steps <= run.warmup) return note + ", and this run ends first, at learning rate " + last;
    note += run.warmup >= end ? ", then drops to " + min_lr : ", then decays to " + min_lr + " by step " + e;
  } else {
    note += from >= end ? "it is at " + min_lr + " since step " + e : "it decays to " + min_lr + " by step " + e;
  }
  if (run.steps == end) return note + ", where this run ends";
  if (run.steps < end)
    return note + "; this run stops before that, at learning rate " + last + " (pass --lr-decay-steps " + n +
           " to end the decay by step " + n + ")";
  note += " and stays there to step " + n;
  if (run.min_lr == 0) note += ", so the steps after " + e + " train at learning rate 0 and change nothing";
  return note + " (pass --lr-decay-steps " + n + " to decay over the longer run)";
}

}  // namespace

void merge_resumed_options(const std::vector<Field>& merged, const std::vector<Field>& given, const nlohmann::json& before,
                           RunOptions& run, int saved_step, const RunControl& control, const fs::path& dir,
                           std::vector<std::string>& notes) {
  // Possible to change, but then the losses leave those of an uninterrupted run.
  static const char* const kTrajectory[] = {"batch-size", "batch-tokens", "grad-accum", "lr-schedule", "lr", "min-lr",
                                            "warmup", "lr-decay-steps", "beta1", "beta2", "eps", "weight-decay",
                                            "grad-clip", "dropout", "label-smoothing", "seed", "parallel"};
  for (size_t i = 0; i < merged.size(); ++i)
    if (control.was_given(merged[i].name)) copy_value(given[i], merged[i]);
  const nlohmann::json after = fields_to_json(merged);
  auto differs = [&](const std::string& name, std::string& item) {
    std::string key = name;
    std::replace(key.begin(), key.end(), '-', '_');
    if (before.value(key, nlohmann::json()) == after.value(key, nlohmann::json())) return false;
    auto text = [](const nlohmann::json& v) { return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
    item = "--" + name + " " + text(after[key]) + " (the run used " + text(before[key]) + ")";
    return true;
  };
  // The model's shape (the fields marked shape): the saved tensors cannot be used with another.
  std::string refused, item;
  for (const Field& f : merged)
    if (f.shape && differs(f.name, item)) refused += (refused.empty() ? "" : ", ") + item;
  if (!refused.empty())
    throw Error("--resume " + dir.string() + ": cannot change " + refused +
                ": the checkpoint holds a model of another shape; drop the flag, or start a new run with another --out");
  for (const std::string& name : kSplitOptions)
    if (differs(name, item) && !control.allow_data_change)
      throw Error("--resume " + dir.string() + ": cannot change " + item +
                  ": it moves the train/validation split; pass --allow-data-change to do it anyway");
  for (const char* name : kTrajectory)
    if (differs(name, item)) notes.push_back(item + ": the losses will differ from an uninterrupted run");
  // More --steps extends the run on the schedule it had: the learning rate finishes its decay
  // where it was going to, and stays at --min-lr after (nanoGPT's lr_decay_iters < max_iters).
  // Only --lr-decay-steps stretches the decay. The note says what that means for this run, also
  // when the decay's end was fixed before (an earlier resume, or --lr-decay-steps).
  const int saved_steps = before.value("steps", run.steps), saved_decay = before.value("lr_decay_steps", 0);
  if (control.was_given("steps") && !control.was_given("lr-decay-steps") && run.steps != saved_steps) {
    if (saved_decay == 0) run.lr_decay_steps = saved_steps;
    if (run.lr_schedule != LrShape::kNoam) notes.push_back(kept_schedule_note(run, saved_step, saved_steps));
  }
  std::error_code ec;
  if (control.was_given("out") && fs::weakly_canonical(run.out, ec) != fs::weakly_canonical(dir, ec))
    throw Error("--out " + run.out + " differs from the directory being resumed (" + dir.string() +
                "); a resumed run continues in its own directory, so leave --out out");
  run.out = dir.string();
  if (run.steps < saved_step)
    throw Error("--steps " + std::to_string(run.steps) + " is below the step of the checkpoint being resumed (" +
                std::to_string(saved_step) + ")");
}

std::string imported_from(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "config.json", ec)) return "";
  try {
    const nlohmann::json config = read_json_file(dir / "config.json");
    const nlohmann::json* imported = config.is_object() && config.contains("imported") ? &config["imported"] : nullptr;
    if (!imported) return "";
    return imported->is_object() && imported->contains("from") && (*imported)["from"].is_string()
               ? (*imported)["from"].get<std::string>()
               : std::string("another program");
  } catch (const Error&) {
    return "";  // an unreadable config.json is reported by what reads it next
  }
}

fs::path resolve_resume_path(const fs::path& what, fs::path& dir, const std::string& command) {
  std::error_code ec;
  const auto st = fs::status(what, ec);
  if (st.type() == fs::file_type::not_found)
    throw Error(what.string() + ": does not exist (--resume takes a model directory written by " + command + ")");
  if (ec) throw Error(what.string() + ": cannot access (" + ec.message() + ")");
  if (fs::is_directory(st)) {
    dir = what;
    const fs::path state = what / kResumeFile;
    if (fs::exists(state, ec)) return state;
    // No state: a run still before its first checkpoint (its first evaluation) says so.
    DirectoryLock::refuse_in_use(what);
    const bool latest = fs::exists(what / "latest.safetensors", ec), best = fs::exists(what / "best.safetensors", ec);
    if (latest) refuse_quantized(read_safetensors_metadata(what / "latest.safetensors"), what.string(), "resuming training");
    const std::string again = "start it again with " + command + " --out " + what.string() + " --force";
    // An imported model holds weights and config.json but no run: --force would delete it.
    if (const std::string from = imported_from(what); !from.empty())
      throw Error(what.string() + ": a model imported by potop import (from " + from + "), never trained by " +
                  command + ", so there is no run to resume; fine-tune it with " + command + " --init-from " +
                  what.string() + " --out NEW_DIR");
    // latest.safetensors alone: an earlier potop wrote it before the first checkpoint's other
    // files failed (a full disk); now the first checkpoint's files appear together.
    if (latest && !best)
      throw Error(what.string() + ": its first checkpoint was not completely written (latest.safetensors without "
                  "best.safetensors or " + kResumeFile + ": a write failed, such as on a full disk), so there is "
                  "nothing to resume; " + again);
    if (latest)
      throw Error(state.string() + ": missing, so " + what.string() +
                  " cannot be resumed (it holds weights only: written by an older potop, or the state was removed)");
    // config.json without any checkpoint: a run that ended before its first one.
    if (fs::exists(what / "config.json", ec) && !best)
      throw Error(what.string() + ": its run ended before its first checkpoint (it was stopped, or writing the "
                  "checkpoint failed), so there is nothing to resume; " + again);
    throw Error(what.string() + ": not a model directory from " + command + " (no " + kResumeFile + ")");
  }
  dir = what.parent_path();
  if (dir.empty()) dir = ".";
  return what;
}

}  // namespace potop
