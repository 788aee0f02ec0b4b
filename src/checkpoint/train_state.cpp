#include "checkpoint/train_state.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <system_error>

#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"

namespace potop {

namespace {

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

std::string snapshot_file(int step) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "step-%06d.safetensors", step);
  return buf;
}

void save_train_state(const fs::path& path, const ParameterSet& params, const ModelHeader& header,
                      const std::vector<TensorGroup>& groups, const TrainState& state) {
  std::string rng;
  for (uint64_t word : state.sampler) {
    if (!rng.empty()) rng += ',';
    rng += hash_hex(word);
  }
  Metadata meta{
      {"step", std::to_string(state.step)},
      {"potop.kind", kTrainStateKind},
      {"potop.state_version", std::to_string(kTrainStateVersion)},
      {"potop.step", std::to_string(state.step)},
      {"potop.eval_pending", state.eval_pending ? "1" : "0"},
      {"potop.adam_steps", std::to_string(state.adam_steps)},
      {"potop.sampler_rng", rng},
      {"potop.best_score", format_float(state.best_score)},
      {"potop.train_loss", format_float(state.train_loss)},
      {"potop.val_loss", format_float(state.val_loss)},
      {"potop.nonfinite_skipped", std::to_string(state.nonfinite_skipped)},
      {"potop.stale_evaluations", std::to_string(state.stale_evaluations)},
      {"potop.data_hash", hash_hex(state.data_hash)},
      {"potop.threads", std::to_string(state.threads)},
      {"potop.ranks", std::to_string(state.ranks)},
      {"potop.elapsed_s", format_double(state.elapsed_s)},
      // replace: a data path that is not valid UTF-8 must not make the checkpoint unwritable
      {"potop.options", state.options.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)},
  };
  if (!state.trainer.empty()) meta["potop.trainer"] = state.trainer;
  // The model header's config (potop.config) is the state's config.
  ModelHeader h = header;
  h.config = state.config;
  save_weights(path, params, h, meta, groups);
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
  // Absent from states written before evaluations could be abandoned: theirs was always done.
  s.eval_pending = file.metadata_value("potop.eval_pending").value_or("0") != "0";
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
  // Absent from states written before early stopping: none.
  if (file.metadata_value("potop.stale_evaluations")) s.stale_evaluations = r.integer<int>("potop.stale_evaluations", 0);
  s.data_hash = r.hex64("potop.data_hash");
  s.vocab_hash = r.hex64("potop.vocab_hash");
  s.threads = r.integer<int>("potop.threads", 1);
  // Absent from states written before multi-process training: one process.
  s.ranks = file.metadata_value("potop.ranks") ? r.integer<int>("potop.ranks", 1) : 1;
  s.elapsed_s = r.real<double>("potop.elapsed_s");
  s.options = r.object("potop.options");
  s.trainer = file.metadata_value("potop.trainer").value_or("");  // absent from older states: unknown
  s.config = r.object("potop.config");
  return s;
}

void load_train_state_tensors(const SafetensorsFile& file, ParameterSet& params, const std::vector<TensorGroup>& groups) {
  refuse_quantized(file.metadata(), file.path(), "resuming training");
  load_weights(file, params);
  load_group_tensors(file, params.layout(), groups);
}

}  // namespace potop
