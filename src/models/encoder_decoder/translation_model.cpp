#include "models/encoder_decoder/translation_model.h"

#include "checkpoint/model_dir.h"
#include "core/error.h"
#include "core/file_io.h"

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
  TranslationModel out;
  static_cast<LoadedAs<EncoderDecoder, EncoderDecoderConfig>&>(out) =
      load_model_dir_as<EncoderDecoder, EncoderDecoderConfig>(dir, which, kEncoderDecoderKind);
  out.source = out.files.value("source", std::string("?")), out.target = out.files.value("target", std::string("?"));
  return out;
}

}  // namespace potop
