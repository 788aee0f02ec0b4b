// The encoder_decoder row of the table of model kinds (models/kinds.h).
#pragma once
#include "nn/model_kind.h"

namespace potop {

const ModelKind& encoder_decoder_kind();

}  // namespace potop
