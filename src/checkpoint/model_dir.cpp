#include "checkpoint/model_dir.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

#include "checkpoint/hf_import.h"
#include "checkpoint/train_state.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "tokenizer/tokenizer.h"

namespace potop {

namespace {

// The kind a config.json or a weights file names ("gpt" when it names none: older versions
// wrote none), checked against the one the caller needs.
const ModelKind& kind_named(const std::string& name, const std::string& where, const std::string& wanted) {
  const ModelKind* found = nullptr;
  try {
    found = &model_kind(name.empty() ? "gpt" : name);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  const ModelKind& kind = *found;
  if (!wanted.empty() && kind.name != wanted) throw wrong_kind(where, kind, model_kind(wanted).noun);
  return kind;
}

// Whether the file starts as a GGUF file does (its magic, "GGUF"), or is named like one.
bool is_gguf_file(const fs::path& path) {
  if (path.extension() == ".gguf") return true;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char magic[4] = {};
  const bool gguf = std::fread(magic, 1, 4, f) == 4 && std::memcmp(magic, "GGUF", 4) == 0;
  std::fclose(f);
  return gguf;
}

int vocab_size_of(const nlohmann::json& config) { return config.value("vocab_size", 0); }

// " (the tokenizer's and 1 of the model's own)": what a vocabulary mismatch message adds for a
// kind with ids past its tokenizer's.
std::string own_ids(const ModelKind& kind, const nlohmann::json& config) {
  const int extra = expected_vocab_size(kind, config, 0);
  return extra ? " (the tokenizer's and " + std::to_string(extra) + " of the model's own)" : "";
}

// Checks the file against the config before the model is allocated, so that a config with absurd
// sizes is reported as a mismatch instead of exhausting memory; then builds the model from it.
void load_checked(LoadedModel& out, const SafetensorsFile& file) {
  check_weights(file, out.kind->parameter_layout(out.config));
  out.metadata = file.metadata();
  out.model = out.kind->make(out.config);
  load_weights(file, out.model->parameters());
}

// A weights file on its own: its kind, config and tokenizer come from its metadata.
LoadedModel load_weights_file(const fs::path& path, const std::string& wanted) {
  LoadedModel out;
  out.weights = path;
  out.files = nlohmann::json::object();
  const SafetensorsFile file = SafetensorsFile::map(path);
  out.choice = path.string() + ": " + describe_checkpoint(file.metadata());
  out.kind = &kind_named(read_model_kind(file), path.string(), wanted);
  const nlohmann::json config = read_model_config(file);
  out.tokenizer = read_tokenizer(file);
  if (config.is_null() || !out.tokenizer)
    throw Error(path.string() + ": holds no model config and tokenizer (not written by this potop); load the model "
                "directory it belongs to instead");
  out.config = out.kind->normalize(config, path.string() + ": potop.config");
  if (expected_vocab_size(*out.kind, out.config, out.tokenizer->size()) != vocab_size_of(out.config))
    throw Error(path.string() + ": its tokenizer has " + std::to_string(out.tokenizer->size()) +
                " tokens but its config says vocab_size " + std::to_string(vocab_size_of(out.config)) +
                own_ids(*out.kind, out.config));
  load_checked(out, file);
  return out;
}

std::optional<double> number(const Metadata& meta, const std::string& key) {
  const auto it = meta.find(key);
  if (it == meta.end()) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (ec != std::errc() || end != it->second.data() + it->second.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// A checkpoint's metadata, or none when its header cannot be read (loading it will say why).
Metadata metadata_of(const fs::path& path) {
  try {
    return read_safetensors_metadata(path);
  } catch (const Error&) {
    return {};
  }
}

}  // namespace

std::string describe_checkpoint(const Metadata& metadata) {
  const auto step = number(metadata, "step");
  const auto val = number(metadata, "val_loss"), train = number(metadata, "train_loss");
  std::string s = step ? "step " + std::to_string(static_cast<long>(*step)) : std::string("step unknown");
  char buf[64];
  if (val) {
    std::snprintf(buf, sizeof buf, ", val loss %.4f", *val);
    s += buf;
  } else if (train) {  // a run without a validation split (--val-fraction 0)
    std::snprintf(buf, sizeof buf, ", train loss %.4f (no validation split)", *train);
    s += buf;
  } else {
    s += ", not evaluated";
  }
  try {
    const std::string quantized = read_quantization(metadata, "metadata");
    if (!quantized.empty()) s += ", " + quantized;
  } catch (const Error&) {
    s += ", bad quantization metadata";  // loading it says what is wrong
  }
  return s;
}

CheckpointChoice choose_checkpoint(const fs::path& dir, const std::string& which) {
  auto chosen = [](const fs::path& path, const std::string& why) {
    if (!fs::exists(path)) throw Error(path.string() + ": checkpoint not found");
    return CheckpointChoice{path, path.string() + ": " + describe_checkpoint(metadata_of(path)) + why};
  };
  if (which == "best" || which == "latest") return chosen(dir / (which + ".safetensors"), "");
  if (which == "resume") return chosen(dir / kResumeFile, "");
  if (which.starts_with("step-")) {
    long step = -1;
    const std::string digits = which.substr(5, which.find('.') == std::string::npos ? std::string::npos : which.find('.') - 5);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
    if (ec == std::errc() && end == digits.data() + digits.size() && step >= 0 && !fs::exists(which))
      return chosen(dir / snapshot_file(static_cast<int>(step)), "");
  }
  if (!which.empty()) {
    if (!fs::exists(which) && fs::exists(dir / which)) return chosen(dir / which, "");
    return chosen(which, "");
  }
  const fs::path best = dir / "best.safetensors", latest = dir / "latest.safetensors";
  if (!fs::exists(best)) return chosen(latest, "");
  if (!fs::exists(latest)) return chosen(best, "");
  const Metadata b = metadata_of(best), l = metadata_of(latest);
  const auto step_b = number(b, "step"), step_l = number(l, "step");
  // The score that picked best.safetensors when the run had one (a classifier's dev error rate),
  // else the validation loss.
  const char* key = b.count("score") && l.count("score") ? "score" : "val_loss";
  const auto val_b = number(b, key), val_l = number(l, key);
  if (step_b && step_l && *step_l > *step_b) {
    if (!(val_l && val_b && *val_l > *val_b))
      return chosen(latest, " (the newest weights; best.safetensors is " + describe_checkpoint(b) + ")");
    return chosen(best, " (latest.safetensors, " + describe_checkpoint(l) + ", is newer but worse)");
  }
  return chosen(best, "");
}

void save_model_files(const fs::path& dir, const std::string& kind, const nlohmann::json& config,
                      const Tokenizer& tokenizer, const nlohmann::json& training, const nlohmann::json& extra) {
  nlohmann::json j = {{"kind", kind}, {"model", config}, {"tokenizer", tokenizer.kind()}, {"training", training}};
  j.update(extra);
  // replace: a data path that is not valid UTF-8 must not make config.json unwritable
  write_file_atomic(dir / "config.json", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  tokenizer.save_files(dir);
}

nlohmann::json read_config_json(const fs::path& dir) {
  if (!fs::exists(dir)) throw Error(dir.string() + ": model directory does not exist");
  if (!fs::is_directory(dir)) {
    if (is_gguf_file(dir))
      throw Error(dir.string() + ": a GGUF file, which potop export writes for llama.cpp; potop loads its own model "
                  "directories and .safetensors files");
    throw Error(dir.string() + ": not a directory (expected a model directory)");
  }
  const fs::path config_path = dir / "config.json";
  if (!fs::exists(config_path)) throw Error(config_path.string() + ": missing (is this a model directory?)");
  const nlohmann::json j = read_json_file(config_path);
  if (is_hf_config(j))
    throw Error(config_path.string() + ": a Hugging Face model's config; import it first: potop import " + dir.string() +
                " --out NEW_DIR");
  if (!j.is_object() || !j.contains("model")) throw Error(config_path.string() + ": no \"model\" object");
  return j;
}

ModelFiles read_model_files(const fs::path& dir, const std::string& wanted) {
  ModelFiles out;
  out.files = read_config_json(dir);
  const fs::path config_path = dir / "config.json";
  const nlohmann::json kind = out.files.value("kind", nlohmann::json(""));
  if (!kind.is_string()) throw Error(config_path.string() + ": \"kind\" must be a string");
  out.kind = &kind_named(kind.get<std::string>(), dir.string(), wanted);
  out.config = out.kind->normalize(out.files.at("model"), config_path.string());
  out.training = out.files.value("training", nlohmann::json::object());
  const nlohmann::json tokenizer_kind = out.files.value("tokenizer", nlohmann::json(out.kind->tokenizer));
  if (!tokenizer_kind.is_string()) throw Error(config_path.string() + ": \"tokenizer\" must be a string");
  out.tokenizer = load_tokenizer(dir, tokenizer_kind.get<std::string>());
  if (expected_vocab_size(*out.kind, out.config, out.tokenizer->size()) != vocab_size_of(out.config))
    throw Error(tokenizer_file_in(dir, out.tokenizer->kind()).string() + ": holds " +
                std::to_string(out.tokenizer->size()) + " tokens but config.json says vocab_size " +
                std::to_string(vocab_size_of(out.config)) + own_ids(*out.kind, out.config));
  return out;
}

LoadedModel load_model_dir(const fs::path& dir, const std::string& which, const std::string& kind) {
  if (fs::is_regular_file(dir) && dir.extension() == ".safetensors" && which.empty())
    return load_weights_file(dir, kind);
  ModelFiles files = read_model_files(dir, kind);
  LoadedModel out;
  out.kind = files.kind;
  out.config = std::move(files.config);
  out.tokenizer = std::move(files.tokenizer);
  out.training = std::move(files.training);
  out.files = std::move(files.files);

  const CheckpointChoice choice = choose_checkpoint(dir, which);
  out.weights = choice.path, out.choice = choice.why;

  const SafetensorsFile file = SafetensorsFile::map(out.weights);
  const std::string weights_kind = read_model_kind(file);
  if (!weights_kind.empty() && weights_kind != out.kind->name)
    throw Error(out.weights.string() + ": holds a '" + weights_kind + "' model, but " + (dir / "config.json").string() +
                " says '" + out.kind->name + "'");
  const std::string hash = read_vocab_hash(file);
  if (!hash.empty() && hash != hash_hex(out.tokenizer->hash()))
    throw Error(out.weights.string() + ": was trained with a different vocabulary than " +
                tokenizer_file_in(dir, out.tokenizer->kind()).string());
  load_checked(out, file);
  return out;
}

std::vector<int> end_of_text_ids(const LoadedModel& m) {
  std::vector<int> ids;
  const auto generation = m.files.find("generation");
  if (generation == m.files.end()) return ids;
  const auto list = generation->find("eos_token_ids");
  const std::string where = "config.json: generation.eos_token_ids";
  if (!generation->is_object() || list == generation->end() || !list->is_array())
    throw Error(where + ": expected a list of token ids");
  for (const nlohmann::json& id : *list) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= m.tokenizer->size())
      throw Error(where + ": " + id.dump() + " is not a token of the model's " + std::to_string(m.tokenizer->size()) +
                  "-token vocabulary");
    ids.push_back(id.get<int>());
  }
  return ids;
}

}  // namespace potop
