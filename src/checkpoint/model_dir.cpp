#include "checkpoint/model_dir.h"

#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"

namespace potop {

namespace {

nlohmann::json parse_json_file(const fs::path& path) {
  const std::string text = read_file(path);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(path.string() + ": not valid JSON");
  return j;
}

// Checks the file against the config before the model is allocated, so that a config with absurd
// sizes is reported as a mismatch instead of exhausting memory; then builds the model from it.
void load_checked(LoadedModel& out, const SafetensorsFile& file) {
  check_weights(file, GPT::parameter_layout(out.config));
  out.metadata = file.metadata();
  out.model = std::make_unique<GPT>(out.config);
  load_weights(file, out.model->parameters());
}

// A weights file on its own: its config and tokenizer come from its metadata.
LoadedModel load_weights_file(const fs::path& path) {
  LoadedModel out;
  out.weights = path;
  const SafetensorsFile file(path);
  const std::string kind = read_model_kind(file);
  const nlohmann::json config = read_model_config(file);
  out.tokenizer = read_tokenizer(file);
  if (config.is_null() || !out.tokenizer)
    throw Error(path.string() + ": holds no model config and tokenizer (not written by this potop); load the model "
                "directory it belongs to instead");
  if (!kind.empty() && kind != "gpt") throw Error(path.string() + ": holds a '" + kind + "' model, not a GPT");
  update_from_json(out.config, config, path.string() + ": potop.config");
  out.config.validate(path.string() + ": potop.config");
  if (out.tokenizer->size() != out.config.vocab_size)
    throw Error(path.string() + ": its tokenizer has " + std::to_string(out.tokenizer->size()) +
                " tokens but its config says vocab_size " + std::to_string(out.config.vocab_size));
  load_checked(out, file);
  return out;
}

}  // namespace

ModelHeader gpt_header(const GPTConfig& config, const Tokenizer& tokenizer) {
  return ModelHeader{"gpt", to_json(config), &tokenizer};
}

void save_model_files(const fs::path& dir, const GPTConfig& config, const Tokenizer& tokenizer,
                      const nlohmann::json& training) {
  nlohmann::json j = {{"kind", "gpt"}, {"model", to_json(config)}, {"tokenizer", tokenizer.kind()}, {"training", training}};
  // replace: a data path that is not valid UTF-8 must not make config.json unwritable
  write_file_atomic(dir / "config.json", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  tokenizer.save_files(dir);
}

LoadedModel load_model_dir(const fs::path& dir, const std::string& which) {
  if (!fs::exists(dir)) throw Error(dir.string() + ": model directory does not exist");
  if (fs::is_regular_file(dir) && dir.extension() == ".safetensors" && which.empty()) return load_weights_file(dir);
  if (!fs::is_directory(dir)) throw Error(dir.string() + ": not a directory (expected a model directory from potop train)");
  const fs::path config_path = dir / "config.json";
  if (!fs::exists(config_path)) throw Error(config_path.string() + ": missing (is this a model directory from potop train?)");

  LoadedModel out;
  const nlohmann::json j = parse_json_file(config_path);
  if (!j.is_object() || !j.contains("model")) throw Error(config_path.string() + ": no \"model\" object");
  const std::string kind = j.value("kind", std::string("gpt"));  // config.json of older versions has none
  if (kind != "gpt") throw Error(config_path.string() + ": a '" + kind + "' model, not a GPT");
  update_from_json(out.config, j.at("model"), config_path.string() + ": model");
  out.config.validate(config_path.string());
  out.training = j.value("training", nlohmann::json::object());
  const nlohmann::json tokenizer_kind = j.value("tokenizer", nlohmann::json("char"));
  if (!tokenizer_kind.is_string()) throw Error(config_path.string() + ": \"tokenizer\" must be a string");
  out.tokenizer = load_tokenizer(dir, tokenizer_kind.get<std::string>());
  if (out.tokenizer->size() != out.config.vocab_size)
    throw Error((dir / "vocab.json").string() + ": holds " + std::to_string(out.tokenizer->size()) +
                " characters but config.json says vocab_size " + std::to_string(out.config.vocab_size));

  if (which.empty()) out.weights = fs::exists(dir / "best.safetensors") ? dir / "best.safetensors" : dir / "latest.safetensors";
  else if (which == "best" || which == "latest") out.weights = dir / (which + ".safetensors");
  else out.weights = which;
  if (!fs::exists(out.weights)) throw Error(out.weights.string() + ": checkpoint not found");

  const SafetensorsFile file(out.weights);
  const std::string hash = read_vocab_hash(file);
  if (!hash.empty() && hash != hash_hex(out.tokenizer->hash()))
    throw Error(out.weights.string() + ": was trained with a different vocabulary than " + (dir / "vocab.json").string());
  load_checked(out, file);
  return out;
}

}  // namespace potop
