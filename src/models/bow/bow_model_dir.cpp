#include "models/bow/bow_model_dir.h"

#include "checkpoint/model_dir.h"
#include "checkpoint/weights.h"
#include "core/error.h"
#include "core/hash.h"

namespace potop {

namespace {

std::string not_bow(const std::string& where, const std::string& kind) {
  return where + ": holds a '" + kind + "' model, not a bag-of-words LM (potop bow commands read what potop bow "
         "train writes; use potop eval / sample for a GPT)";
}

void load_checked(LoadedBow& out, const SafetensorsFile& file, const std::string& source) {
  update_from_json(out.config, read_model_config(file).is_null() ? nlohmann::json::object() : read_model_config(file),
                   source);
  out.config.validate(source);
  if (out.tokenizer->size() != out.config.vocab_size)
    throw Error(source + ": its tokenizer has " + std::to_string(out.tokenizer->size()) +
                " tokens but the config says vocab_size " + std::to_string(out.config.vocab_size));
  check_weights(file, BowLM::parameter_layout(out.config));  // before allocating: absurd sizes are a mismatch
  out.model = std::make_unique<BowLM>(out.config);
  load_weights(file, out.model->parameters());
}

}  // namespace

LoadedBow load_bow_dir(const fs::path& dir, const std::string& which) {
  LoadedBow out;
  if (fs::is_regular_file(dir) && dir.extension() == ".safetensors" && which.empty()) {
    const SafetensorsFile file(dir);
    const std::string kind = read_model_kind(file);
    if (kind != kBowKind) throw Error(not_bow(dir.string(), kind.empty() ? "gpt" : kind));
    out.tokenizer = read_tokenizer(file);
    if (!out.tokenizer) throw Error(dir.string() + ": holds no tokenizer (not written by potop bow train)");
    out.weights = dir, out.choice = dir.string() + ": " + describe_checkpoint(file.metadata());
    load_checked(out, file, dir.string() + ": potop.config");
    return out;
  }
  const nlohmann::json j = read_config_json(dir);
  const fs::path config_path = dir / "config.json";
  const std::string kind = j.value("kind", std::string("gpt"));
  if (kind != kBowKind) throw Error(not_bow(config_path.string(), kind));
  const nlohmann::json tokenizer_kind = j.value("tokenizer", nlohmann::json("word"));
  if (!tokenizer_kind.is_string()) throw Error(config_path.string() + ": \"tokenizer\" must be a string");
  out.tokenizer = load_tokenizer(dir, tokenizer_kind.get<std::string>());
  out.training = j.value("training", nlohmann::json::object());
  const CheckpointChoice choice = choose_checkpoint(dir, which);
  out.weights = choice.path, out.choice = choice.why;
  const SafetensorsFile file(out.weights);
  const std::string weights_kind = read_model_kind(file);
  if (!weights_kind.empty() && weights_kind != kBowKind) throw Error(not_bow(out.weights.string(), weights_kind));
  const std::string hash = read_vocab_hash(file);
  if (!hash.empty() && hash != hash_hex(out.tokenizer->hash()))
    throw Error(out.weights.string() + ": was trained with a different vocabulary than " +
                tokenizer_file_in(dir, out.tokenizer->kind()).string());
  // The config.json's model config is the one the directory promises; the weights must match it.
  update_from_json(out.config, j.at("model"), config_path.string() + ": model");
  out.config.validate(config_path.string());
  if (out.tokenizer->size() != out.config.vocab_size)
    throw Error(tokenizer_file_in(dir, out.tokenizer->kind()).string() + ": holds " +
                std::to_string(out.tokenizer->size()) + " tokens but config.json says vocab_size " +
                std::to_string(out.config.vocab_size));
  check_weights(file, BowLM::parameter_layout(out.config));
  out.model = std::make_unique<BowLM>(out.config);
  load_weights(file, out.model->parameters());
  return out;
}

}  // namespace potop
