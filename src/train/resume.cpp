#include "train/resume.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <system_error>

#include "checkpoint/weights.h"
#include "core/error.h"

namespace potop {

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
  // Only --lr-decay-steps stretches the decay.
  const int saved_steps = before.value("steps", run.steps), saved_decay = before.value("lr_decay_steps", 0);
  if (control.was_given("steps") && !control.was_given("lr-decay-steps") && run.steps != saved_steps &&
      saved_decay == 0) {
    run.lr_decay_steps = saved_steps;
    if (run.lr_schedule != LrShape::kNoam)
      notes.push_back("--steps " + std::to_string(run.steps) + " (the run had " + std::to_string(saved_steps) +
                       "): the learning rate keeps the run's schedule, decaying to --min-lr by step " +
                       std::to_string(saved_steps) + "; pass --lr-decay-steps to decay over the longer run");
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
    if (fs::exists(what / "latest.safetensors", ec)) {
      refuse_quantized(read_safetensors_metadata(what / "latest.safetensors"), what.string(), "resuming training");
      throw Error(state.string() + ": missing, so " + what.string() +
                  " cannot be resumed (it holds weights only: written by an older potop, or the state was removed)");
    }
    // config.json without any checkpoint: a run that was stopped before its first one.
    if (fs::exists(what / "config.json", ec) && !fs::exists(what / "best.safetensors", ec))
      throw Error(what.string() + ": its run was stopped before its first checkpoint, so there is nothing to resume; "
                  "start it again with " + command + " --out " + what.string() + " --force");
    throw Error(what.string() + ": not a model directory from " + command + " (no " + kResumeFile + ")");
  }
  dir = what.parent_path();
  if (dir.empty()) dir = ".";
  return what;
}

}  // namespace potop
