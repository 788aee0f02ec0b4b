#include "train/resume.h"

#include <algorithm>
#include <system_error>

#include "core/error.h"

namespace potop {

TrainOptions resume_options(const TrainState& state, const TrainOptions& requested,
                            const std::vector<std::string>& given, const fs::path& dir, bool allow_data_change,
                            std::vector<std::string>& notes) {
  // Possible to change, but then the losses leave those of an uninterrupted run.
  static const char* const kTrajectory[] = {"batch-size", "grad-accum", "lr", "min-lr", "warmup", "lr-decay-steps",
                                            "beta1", "beta2", "weight-decay", "grad-clip", "dropout", "seed",
                                            "parallel"};
  TrainOptions saved;
  apply_options_json(saved, state.options, dir.string() + ": the checkpoint's options");
  TrainOptions merged = saved;
  TrainOptions from = requested;
  const std::vector<Field> to = option_fields(merged);
  const std::vector<Field> source = option_fields(from);
  for (size_t i = 0; i < to.size(); ++i)
    if (std::find(given.begin(), given.end(), to[i].name) != given.end()) copy_value(source[i], to[i]);
  const nlohmann::json before = to_json(saved), after = to_json(merged);
  auto differs = [&](const std::string& name, std::string& list) {
    std::string key = name;
    std::replace(key.begin(), key.end(), '-', '_');
    if (before.value(key, nlohmann::json()) == after.value(key, nlohmann::json())) return false;
    auto text = [](const nlohmann::json& v) { return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
    list = "--" + name + " " + text(after[key]) + " (the run used " + text(before[key]) + ")";
    return true;
  };
  // The model's shape (the fields marked shape): the saved tensors cannot be used with another.
  std::string refused, item;
  for (const Field& f : to)
    if (f.shape && differs(f.name, item)) refused += (refused.empty() ? "" : ", ") + item;
  if (!refused.empty())
    throw Error("--resume " + dir.string() + ": cannot change " + refused +
                ": the checkpoint holds a model of another shape; drop the flag, or start a new run with another --out");
  if (differs("val-fraction", item) && !allow_data_change)
    throw Error("--resume " + dir.string() + ": cannot change " + item +
                ": it moves the train/validation split; pass --allow-data-change to do it anyway");
  for (const char* name : kTrajectory)
    if (differs(name, item)) notes.push_back(item + ": the losses will differ from an uninterrupted run");
  // More --steps extends the run on the schedule it had: the learning rate finishes its decay
  // where it was going to, and stays at --min-lr after (nanoGPT's lr_decay_iters < max_iters).
  // Only --lr-decay-steps stretches the decay.
  const bool given_steps = std::find(given.begin(), given.end(), "steps") != given.end();
  const bool given_decay = std::find(given.begin(), given.end(), "lr-decay-steps") != given.end();
  if (given_steps && !given_decay && merged.steps != saved.steps && saved.lr_decay_steps == 0) {
    merged.lr_decay_steps = saved.steps;
    notes.push_back("--steps " + std::to_string(merged.steps) + " (the run had " + std::to_string(saved.steps) +
                    "): the learning rate keeps the run's schedule, decaying to --min-lr by step " +
                    std::to_string(saved.steps) + "; pass --lr-decay-steps to decay over the longer run");
  }

  std::error_code ec;
  if (std::find(given.begin(), given.end(), "out") != given.end() &&
      fs::weakly_canonical(merged.out, ec) != fs::weakly_canonical(dir, ec))
    throw Error("--out " + merged.out + " differs from the directory being resumed (" + dir.string() +
                "); a resumed run continues in its own directory, so leave --out out");
  merged.out = dir.string();
  if (merged.steps < state.step)
    throw Error("--steps " + std::to_string(merged.steps) + " is below the step of the checkpoint being resumed (" +
                std::to_string(state.step) + ")");
  return merged;
}

fs::path resolve_resume_path(const fs::path& what, fs::path& dir) {
  std::error_code ec;
  const auto st = fs::status(what, ec);
  if (st.type() == fs::file_type::not_found)
    throw Error(what.string() + ": does not exist (--resume takes a model directory written by potop train)");
  if (ec) throw Error(what.string() + ": cannot access (" + ec.message() + ")");
  if (fs::is_directory(st)) {
    dir = what;
    const fs::path state = what / kResumeFile;
    if (fs::exists(state, ec)) return state;
    if (fs::exists(what / "latest.safetensors", ec))
      throw Error(state.string() + ": missing, so " + what.string() +
                  " cannot be resumed (it holds weights only: written by an older potop, or the state was removed)");
    throw Error(what.string() + ": not a model directory from potop train (no " + kResumeFile + ")");
  }
  dir = what.parent_path();
  if (dir.empty()) dir = ".";
  return what;
}

}  // namespace potop
