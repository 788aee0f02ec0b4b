// The table of model kinds: its rows, one per model folder, in the order potop info lists them.
#include "nn/model_kind.h"

#include "models/bert/bert_kind.h"
#include "models/bow/bow_kind.h"
#include "models/classifier/classifier_kind.h"
#include "models/encoder_decoder/encoder_decoder_kind.h"
#include "models/gpt/gpt_kind.h"
#include "models/llama/llama_kind.h"

namespace potop {

const std::vector<const ModelKind*>& model_kinds() {
  static const std::vector<const ModelKind*> kinds = {&gpt_kind(), &llama_kind(), &encoder_decoder_kind(), &bow_kind(), &bert_kind(),
                                                      &classifier_kind()};
  return kinds;
}

}  // namespace potop
