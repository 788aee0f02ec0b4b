// A GPT's config is the Transformer body's (nn/transformer_config.h): nothing of its own.
#pragma once
#include <vector>

#include "nn/transformer_config.h"

namespace potop {

using GPTConfig = TransformerConfig;

// The flags of `potop train`'s model, in --help order.
inline std::vector<Field> gpt_fields(GPTConfig& config) { return transformer_fields(config); }

}  // namespace potop
