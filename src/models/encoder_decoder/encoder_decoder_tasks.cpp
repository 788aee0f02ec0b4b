// What an encoder-decoder does besides training (nn/tasks.h): translates, and shows the decoder's
// cross-attention on the source.
#include "models/encoder_decoder/encoder_decoder.h"
#include "models/encoder_decoder/translator.h"

namespace potop {

std::vector<int> EncoderDecoder::translate(std::span<const int> source, const DecodeOptions& options) {
  return translate_ids(*this, source, options);
}

void EncoderDecoder::attend(const std::vector<int>& source, const std::vector<int>& target) {
  // Row i is the position that predicts target token i (its input is token i - 1, or <s>).
  attended_input_.assign(1, kBosId);
  attended_input_.insert(attended_input_.end(), target.begin(), target.end());
  Batch batch;
  batch.B = 1, batch.T = int(attended_input_.size()), batch.S = int(source.size());
  batch.tokens = attended_input_.data(), batch.source = source.data();
  forward(batch, Pass{});
}

}  // namespace potop
