#include "train/train_state.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <system_error>

#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"

namespace potop {

namespace {

constexpr const char* kMomentM = "adamw.m.";
constexpr const char* kMomentV = "adamw.v.";

std::string format_float(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));  // 9 digits round-trip a float
  return buf;
}

std::string format_double(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Reads metadata values strictly, naming the file and key in every error.
class MetaReader {
 public:
  explicit MetaReader(const SafetensorsFile& file) : file_(file) {}

  const std::string& text(const std::string& key) const {
    auto it = file_.metadata().find(key);
    if (it == file_.metadata().end()) fail(key, "is missing");
    return it->second;
  }
  template <class T>
  T integer(const std::string& key, T min_value) const {
    const std::string& s = text(key);
    T v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) fail(key, "is not an integer ('" + s + "')");
    if (v < min_value) fail(key, "is out of range (" + s + ")");
    return v;
  }
  template <class T>  // float or double
  T real(const std::string& key) const {
    const std::string& s = text(key);
    T v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) fail(key, "is not a number ('" + s + "')");
    return v;
  }
  uint64_t hex64(const std::string& key, std::string_view s) const {
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (s.size() != 16 || ec != std::errc() || end != s.data() + s.size())
      fail(key, "is not 16 hexadecimal digits ('" + std::string(s) + "')");
    return v;
  }
  uint64_t hex64(const std::string& key) const { return hex64(key, text(key)); }
  nlohmann::json object(const std::string& key) const {
    nlohmann::json j = nlohmann::json::parse(text(key), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) fail(key, "is not a JSON object");
    return j;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(file_.path() + ": metadata '" + key + "' " + what + " (the training state is damaged)");
  }

 private:
  const SafetensorsFile& file_;
};

}  // namespace

uint64_t hash_training_text(std::u32string_view text) {
  return fnv1a64_raw(text.data(), text.size() * sizeof(char32_t));
}

void save_train_state(const fs::path& path, const GPT& model, const Arena& m, const Arena& v,
                      const TrainState& state) {
  const auto& specs = model.layout().specs();
  std::vector<std::string> names;  // keeps the moment names alive while the entries point at them
  names.reserve(2 * specs.size());
  for (const TensorSpec& spec : specs) names.push_back(kMomentM + spec.name);
  for (const TensorSpec& spec : specs) names.push_back(kMomentV + spec.name);
  std::vector<SafetensorsEntry> entries;
  for (const TensorSpec& spec : specs) entries.push_back({spec.name, Dtype::F32, spec.shape, model.params().at(spec)});
  for (size_t i = 0; i < specs.size(); ++i) entries.push_back({names[i], Dtype::F32, specs[i].shape, m.at(specs[i])});
  for (size_t i = 0; i < specs.size(); ++i)
    entries.push_back({names[specs.size() + i], Dtype::F32, specs[i].shape, v.at(specs[i])});

  std::string rng;
  for (uint64_t word : state.sampler) {
    if (!rng.empty()) rng += ',';
    rng += hash_hex(word);
  }
  const Metadata meta{
      {"format", "pt"},
      {"step", std::to_string(state.step)},
      {"potop.kind", kTrainStateKind},
      {"potop.state_version", std::to_string(kTrainStateVersion)},
      {"potop.step", std::to_string(state.step)},
      {"potop.adam_steps", std::to_string(state.adam_steps)},
      {"potop.sampler_rng", rng},
      {"potop.best_score", format_float(state.best_score)},
      {"potop.train_loss", format_float(state.train_loss)},
      {"potop.val_loss", format_float(state.val_loss)},
      {"potop.nonfinite_skipped", std::to_string(state.nonfinite_skipped)},
      {"potop.data_hash", hash_hex(state.data_hash)},
      {"potop.vocab_hash", hash_hex(state.vocab_hash)},
      {"potop.threads", std::to_string(state.threads)},
      {"potop.elapsed_s", format_double(state.elapsed_s)},
      // replace: a data path that is not valid UTF-8 must not make the checkpoint unwritable
      {"potop.options", state.options.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)},
      {"potop.config", state.config.dump()},
  };
  write_safetensors(path, entries, meta);
}

TrainState read_train_state(const SafetensorsFile& file) {
  const MetaReader r(file);
  const auto kind = file.metadata_value("potop.kind");
  if (!kind || *kind != kTrainStateKind)
    throw Error(file.path() + ": not a training state (weights only?); --resume needs a model directory written by "
                "potop train, or its resume.safetensors / step-<N>.safetensors");
  const int version = r.integer<int>("potop.state_version", 1);
  if (version != kTrainStateVersion)
    r.fail("potop.state_version", "is " + std::to_string(version) + ", but this potop reads version " +
                                      std::to_string(kTrainStateVersion));
  TrainState s;
  s.step = r.integer<int>("potop.step", 0);
  s.adam_steps = r.integer<long>("potop.adam_steps", 0);
  const std::string& rng = r.text("potop.sampler_rng");
  if (rng.size() != 4 * 16 + 3) r.fail("potop.sampler_rng", "is not four comma-separated 64-bit hex words");
  for (size_t i = 0; i < 4; ++i) {
    if (i > 0 && rng[i * 17 - 1] != ',') r.fail("potop.sampler_rng", "is not four comma-separated 64-bit hex words");
    s.sampler[i] = r.hex64("potop.sampler_rng", std::string_view(rng).substr(i * 17, 16));
  }
  if (s.sampler == Rng::State{}) r.fail("potop.sampler_rng", "is all zero, which no generator can be in");
  s.best_score = r.real<float>("potop.best_score");
  s.train_loss = r.real<float>("potop.train_loss");
  s.val_loss = r.real<float>("potop.val_loss");
  s.nonfinite_skipped = r.integer<int>("potop.nonfinite_skipped", 0);
  s.data_hash = r.hex64("potop.data_hash");
  s.vocab_hash = r.hex64("potop.vocab_hash");
  s.threads = r.integer<int>("potop.threads", 1);
  s.elapsed_s = r.real<double>("potop.elapsed_s");
  s.options = r.object("potop.options");
  s.config = r.object("potop.config");
  return s;
}

TrainOptions resume_options(const TrainState& state, const TrainOptions& requested,
                            const std::vector<std::string>& given, const fs::path& dir, bool allow_data_change,
                            std::vector<std::string>& notes) {
  // The model's shape: the saved tensors cannot be used with another.
  static const char* const kArchitecture[] = {"n-layer", "n-head", "n-embd", "block-size",
                                              "bias",    "norm",   "activation", "positions"};
  // Possible to change, but then the losses leave those of an uninterrupted run.
  static const char* const kTrajectory[] = {"steps", "batch-size", "grad-accum", "lr", "min-lr", "warmup", "beta1",
                                            "beta2", "weight-decay", "grad-clip", "dropout", "seed", "parallel"};
  TrainOptions saved;
  apply_options_json(saved, state.options, dir.string() + ": the checkpoint's options");
  TrainOptions merged = saved;
  TrainOptions from = requested;
  auto to = option_fields(merged);
  const auto source = option_fields(from);
  for (size_t i = 0; i < to.size(); ++i) {
    if (std::find(given.begin(), given.end(), to[i].name) == given.end()) continue;
    std::visit([&](auto* target) { *target = *std::get<std::remove_reference_t<decltype(target)>>(source[i].target); },
               to[i].target);
  }
  const nlohmann::json before = to_json(saved), after = to_json(merged);
  auto differs = [&](const std::string& name, std::string& list) {
    std::string key = name;
    std::replace(key.begin(), key.end(), '-', '_');
    if (before.value(key, nlohmann::json()) == after.value(key, nlohmann::json())) return false;
    auto text = [](const nlohmann::json& v) { return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
    list = "--" + name + " " + text(after[key]) + " (the run used " + text(before[key]) + ")";
    return true;
  };
  std::string refused, item;
  for (const char* name : kArchitecture)
    if (differs(name, item)) refused += (refused.empty() ? "" : ", ") + item;
  if (!refused.empty())
    throw Error("--resume " + dir.string() + ": cannot change " + refused +
                ": the checkpoint holds a model of another shape; drop the flag, or start a new run with another --out");
  if (differs("val-fraction", item) && !allow_data_change)
    throw Error("--resume " + dir.string() + ": cannot change " + item +
                ": it moves the train/validation split; pass --allow-data-change to do it anyway");
  for (const char* name : kTrajectory)
    if (differs(name, item)) notes.push_back(item);

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

void load_train_state_tensors(const SafetensorsFile& file, GPT& model, Arena& m, Arena& v) {
  const Layout& layout = model.layout();
  for (const TensorSpec& spec : layout.specs()) {
    for (const std::string& name : {spec.name, kMomentM + spec.name, kMomentV + spec.name})
      if (!file.has(name))
        throw Error(file.path() + ": tensor '" + name + "' is missing (the state does not match the model)");
    file.copy_f32_into(spec.name, model.params().at(spec), spec.shape);
    file.copy_f32_into(kMomentM + spec.name, m.at(spec), spec.shape);
    file.copy_f32_into(kMomentV + spec.name, v.at(spec), spec.shape);
  }
  const size_t expected = 3 * layout.specs().size();
  if (file.names().size() != expected) {
    for (const std::string& name : file.names()) {
      std::string base = name;
      if (name.starts_with(kMomentM)) base = name.substr(8);
      else if (name.starts_with(kMomentV)) base = name.substr(8);
      if (!layout.find(base))
        throw Error(file.path() + ": unexpected tensor '" + name + "' (the state does not match the model)");
    }
  }
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

void truncate_metrics(const fs::path& metrics, int step) {
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
    kept.append(line).push_back('\n');
  }
  if (kept != text) write_file_atomic(metrics, kept);
}

int remove_stale_temporaries(const fs::path& dir) {
  std::error_code ec;
  int removed = 0;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t tmp = name.rfind(".tmp-");
    if (tmp == std::string::npos) continue;
    const std::string base = name.substr(0, tmp), pid_text = name.substr(tmp + 5);
    const bool ours = base == "config.json" || base == "vocab.json" || base == "metrics.jsonl" ||
                      base == "latest.safetensors" || base == "best.safetensors" || base == kResumeFile ||
                      (base.starts_with("step-") && base.ends_with(".safetensors"));
    long pid = 0;
    const auto [end, perr] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
    if (!ours || perr != std::errc() || end != pid_text.data() + pid_text.size() || pid <= 0) continue;
    if (pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) == 0) continue;  // its writer still runs
    if (fs::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace potop
