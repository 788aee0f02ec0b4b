// The encoder-decoder row of the table of model kinds (nn/model_kind.h), and its name.
#pragma once
#include "nn/model_kind.h"

namespace potop {

inline constexpr const char* kEncoderDecoderKind = "encoder-decoder";

const ModelKind& encoder_decoder_kind();

}  // namespace potop
