#include "models/encoder_decoder/translation_model.h"

#include "checkpoint/model_dir.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"

namespace potop {

ModelHeader encoder_decoder_header(const EncoderDecoderConfig& config, const Tokenizer& tokenizer) {
  return ModelHeader{kEncoderDecoderKind, to_json(config), &tokenizer};
}

void save_translation_files(const fs::path& dir, const EncoderDecoderConfig& config, const Tokenizer& tokenizer,
                            const std::string& source, const std::string& target, const nlohmann::json& training) {
  const nlohmann::json j = {{"kind", kEncoderDecoderKind}, {"model", to_json(config)}, {"tokenizer", tokenizer.kind()},
                            {"source", source},          {"target", target},         {"training", training}};
  write_file_atomic(dir / "config.json", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  tokenizer.save_files(dir);
}

TranslationModel load_translation_model(const fs::path& dir, const std::string& which) {
  if (!fs::is_directory(dir))
    throw Error("--model " + dir.string() + ": not a model directory (expected one written by potop translate train)");
  const fs::path config_path = dir / "config.json";
  if (!fs::exists(config_path))
    throw Error(config_path.string() + ": missing (is this a model directory from potop translate train?)");
  const nlohmann::json j = nlohmann::json::parse(read_file(config_path), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("model"))
    throw Error(config_path.string() + ": not valid JSON with a \"model\" object");
  const std::string kind = j.value("kind", std::string("gpt"));
  if (kind != kEncoderDecoderKind)
    throw Error(config_path.string() + ": a '" + kind + "' model (decoder-only), not a translation model; " +
                "it generates text with potop sample");
  TranslationModel out;
  update_from_json(out.config, j.at("model"), config_path.string() + ": model");
  out.config.validate(config_path.string());
  out.source = j.value("source", std::string("?")), out.target = j.value("target", std::string("?"));
  out.training = j.value("training", nlohmann::json::object());
  out.tokenizer = load_tokenizer(dir, j.value("tokenizer", std::string("bpe")));
  if (out.tokenizer->size() != out.config.vocab_size)
    throw Error(tokenizer_file_in(dir, out.tokenizer->kind()).string() + ": holds " +
                std::to_string(out.tokenizer->size()) + " tokens but config.json says vocab_size " +
                std::to_string(out.config.vocab_size));
  const CheckpointChoice choice = choose_checkpoint(dir, which);
  out.choice = choice.why;
  const SafetensorsFile file(choice.path);
  const std::string hash = read_vocab_hash(file);
  if (!hash.empty() && hash != hash_hex(out.tokenizer->hash()))
    throw Error(choice.path.string() + ": was trained with a different vocabulary than " +
                tokenizer_file_in(dir, out.tokenizer->kind()).string());
  check_weights(file, EncoderDecoder::parameter_layout(out.config));
  out.model = std::make_unique<EncoderDecoder>(out.config);
  load_weights(file, out.model->parameters());
  return out;
}

}  // namespace potop
