// The tables of model kinds (their rows, one per model folder, in the order potop info lists them)
// and of the decoder architectures potop train --arch trains.
#include "nn/model_kind.h"

#include "models/bert/bert_kind.h"
#include "models/bow/bow_kind.h"
#include "models/classifier/classifier_kind.h"
#include "models/encoder_decoder/encoder_decoder_kind.h"
#include "models/decoder/decoder_trainer.h"
#include "models/gpt/gpt_kind.h"
#include "models/gpt/gpt_trainer.h"
#include "models/llama/llama_kind.h"
#include "models/llama/llama_trainer.h"

namespace potop {

const std::vector<const ModelKind*>& model_kinds() {
  static const std::vector<const ModelKind*> kinds = {&gpt_kind(), &llama_kind(), &encoder_decoder_kind(), &bow_kind(), &bert_kind(),
                                                      &classifier_kind()};
  return kinds;
}

const std::vector<DecoderArch>& decoder_archs() {
  static const std::vector<DecoderArch> archs = {gpt2_arch(), llama_arch()};
  return archs;
}

}  // namespace potop
