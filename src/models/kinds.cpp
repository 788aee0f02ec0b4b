#include "models/kinds.h"

#include "models/bert/bert_kind.h"
#include "models/bow/bow_kind.h"
#include "models/classifier/classifier_kind.h"
#include "models/encoder_decoder/encoder_decoder_kind.h"
#include "models/gpt/gpt_kind.h"

namespace potop {

const std::vector<const ModelKind*>& model_kinds() {
  static const std::vector<const ModelKind*> kinds = {&gpt_kind(), &encoder_decoder_kind(), &bow_kind(), &bert_kind(),
                                                      &classifier_kind()};
  return kinds;
}

const ModelKind& model_kind(const std::string& name) {
  std::string known;
  for (const ModelKind* kind : model_kinds()) {
    if (kind->name == name) return *kind;
    known += (known.empty() ? "" : ", ") + kind->name;
  }
  throw Error("unknown model kind '" + name + "' (known: " + known + ")");
}

int expected_vocab_size(const ModelKind& kind, const nlohmann::json& config, int tokenizer_size) {
  return tokenizer_size + (kind.extra_ids ? kind.extra_ids(config) : 0);
}

Error wrong_kind(const std::string& where, const ModelKind& kind, const std::string& wanted) {
  return Error(where + ": " + kind.description + " (kind '" + kind.name + "'), not " + wanted + "; " + kind.hint);
}

}  // namespace potop
