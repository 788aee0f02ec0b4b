#include "models/encoder_decoder/translation_model.h"

#include "checkpoint/model_dir.h"
#include "core/error.h"
#include "data/parallel_corpus.h"

namespace potop {

ModelHeader encoder_decoder_header(const EncoderDecoderConfig& config, const Tokenizer& tokenizer) {
  return ModelHeader{kEncoderDecoderKind, to_json(config), &tokenizer};
}

void save_translation_files(const fs::path& dir, const EncoderDecoderConfig& config, const Tokenizer& tokenizer,
                            const std::string& source, const std::string& target, const nlohmann::json& training) {
  save_model_files(dir, kEncoderDecoderKind, to_json(config), tokenizer, training,
                   {{"source", source}, {"target", target}});
}

TranslationModel load_translation_model(const fs::path& dir, const std::string& which) {
  return as_translation_model(load_model_dir(dir, which, kEncoderDecoderKind));
}

TranslationModel as_translation_model(LoadedModel&& loaded) {
  TranslationModel out;
  static_cast<LoadedAs<EncoderDecoder, EncoderDecoderConfig>&>(out) =
      loaded_as<EncoderDecoder, EncoderDecoderConfig>(std::move(loaded));
  out.source = out.files.value("source", std::string("?")), out.target = out.files.value("target", std::string("?"));
  return out;
}

bool TranslationModel::pretrained_on_spans() const { return source == kSpanSource && target == kSpanTarget; }

void require_sentence_pairs(const TranslationModel& m, const std::string& model) {
  if (m.pretrained_on_spans())  // no pairs to score, and no test.tsv
    throw Error("-m " + model + ": a T5 pre-trained model (potop translate pretrain: text to masked spans), "
                "not a translation model, so there are no sentence pairs to score; its held-out loss is in "
                "metrics.jsonl (potop info, potop plot), or fine-tune it with potop translate train --init-from " +
                model);
}

bool source_is_first_column(const TranslationModel& m, std::string columns, const std::string& data) {
  if (columns.empty()) columns = m.training.value("columns", std::string("en,pl"));
  const std::optional<PairColumns> pair = parse_pair_columns(columns);
  if (!pair) throw Error("--columns " + columns + ": expected two languages, like en,pl");
  const auto& [first, second] = *pair;
  if ((m.source != first && m.source != second) || (m.target != first && m.target != second))
    throw Error("--data " + data + ": its columns (" + columns + ") are not the model's languages " + m.source +
                " and " + m.target);
  return m.source == first;
}

}  // namespace potop
