#include "checkpoint/model_dir.h"

#include "core/error.h"
#include "core/file_io.h"

namespace potop {

namespace {

constexpr const char* kConfigKey = "potop.config";
constexpr const char* kVocabHashKey = "potop.vocab_hash";

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

nlohmann::json parse_json_file(const fs::path& path) {
  const std::string text = read_file(path);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(path.string() + ": not valid JSON");
  return j;
}

}  // namespace

void save_model_files(const fs::path& dir, const GPTConfig& config, const CharTokenizer& tokenizer,
                      const nlohmann::json& training) {
  nlohmann::json j = {{"model", to_json(config)}, {"training", training}};
  // replace: a data path that is not valid UTF-8 must not make config.json unwritable
  write_file_atomic(dir / "config.json", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  tokenizer.save(dir / "vocab.json");
}

void save_weights(const fs::path& path, const GPT& model, const CharTokenizer& tokenizer, Metadata metadata) {
  std::vector<SafetensorsEntry> entries;
  for (const TensorSpec& spec : model.layout().specs())
    entries.push_back({spec.name, Dtype::F32, spec.shape, model.params().at(spec)});
  metadata[kConfigKey] = to_json(model.config()).dump();
  metadata[kVocabHashKey] = hex(tokenizer.hash());
  metadata["format"] = "pt";  // what Hugging Face's loaders expect of GPT-2 weights
  write_safetensors(path, entries, metadata);
}

void load_weights(const fs::path& path, GPT& model) { load_weights(SafetensorsFile(path), model); }

namespace {

// The file must hold exactly the layout's tensors, as F32 with the layout's shapes. A training
// state (potop.kind = train_state) may also hold the AdamW moments, under "adamw.".
void check_weights(const SafetensorsFile& file, const Layout& layout) {
  const std::string& path = file.path();
  for (const TensorSpec& spec : layout.specs()) {
    if (!file.has(spec.name))
      throw Error(path + ": tensor '" + spec.name + "' is missing (the checkpoint does not match config.json)");
    const SafetensorsInfo& info = file.info(spec.name);
    if (info.dtype != Dtype::F32)
      throw Error(path + ": tensor '" + spec.name + "' is " + dtype_name(info.dtype) + ", expected F32");
    if (info.shape != spec.shape)
      throw Error(path + ": tensor '" + spec.name + "' has shape " + shape_string(info.shape) + " in the file, but " +
                  shape_string(spec.shape) + " is expected (the checkpoint does not match config.json)");
  }
  const bool state = file.metadata_value("potop.kind") == std::optional<std::string>("train_state");
  for (const std::string& name : file.names()) {
    if (state && name.starts_with("adamw.")) continue;
    if (!layout.find(name))
      throw Error(path + ": unexpected tensor '" + name + "' (the checkpoint does not match config.json)");
  }
}

}  // namespace

void load_weights(const SafetensorsFile& file, GPT& model) {
  check_weights(file, model.layout());
  for (const TensorSpec& spec : model.layout().specs())
    file.copy_f32_into(spec.name, model.params().at(spec), spec.shape);
}

LoadedModel load_model_dir(const fs::path& dir, const std::string& which) {
  if (!fs::exists(dir)) throw Error(dir.string() + ": model directory does not exist");
  if (!fs::is_directory(dir)) throw Error(dir.string() + ": not a directory (expected a model directory from potop train)");
  const fs::path config_path = dir / "config.json";
  if (!fs::exists(config_path)) throw Error(config_path.string() + ": missing (is this a model directory from potop train?)");

  LoadedModel out;
  const nlohmann::json j = parse_json_file(config_path);
  if (!j.is_object() || !j.contains("model")) throw Error(config_path.string() + ": no \"model\" object");
  update_from_json(out.config, j.at("model"), config_path.string() + ": model");
  out.config.validate(config_path.string());
  out.training = j.value("training", nlohmann::json::object());
  out.tokenizer = CharTokenizer::load(dir / "vocab.json");
  if (out.tokenizer.size() != out.config.vocab_size)
    throw Error((dir / "vocab.json").string() + ": holds " + std::to_string(out.tokenizer.size()) +
                " characters but config.json says vocab_size " + std::to_string(out.config.vocab_size));

  if (which.empty()) out.weights = fs::exists(dir / "best.safetensors") ? dir / "best.safetensors" : dir / "latest.safetensors";
  else if (which == "best" || which == "latest") out.weights = dir / (which + ".safetensors");
  else out.weights = which;
  if (!fs::exists(out.weights)) throw Error(out.weights.string() + ": checkpoint not found");

  // Everything is checked against the file before the model is allocated, so a config.json
  // with absurd sizes is reported as a mismatch instead of exhausting memory.
  const SafetensorsFile file(out.weights);
  check_weights(file, gpt_parameter_layout(out.config));
  out.metadata = file.metadata();
  auto hash = out.metadata.find(kVocabHashKey);
  if (hash != out.metadata.end() && hash->second != hex(out.tokenizer.hash()))
    throw Error(out.weights.string() + ": was trained with a different vocabulary than " + (dir / "vocab.json").string());
  out.model = std::make_unique<GPT>(out.config);
  load_weights(file, *out.model);
  return out;
}

}  // namespace potop
