#include "models/gpt/gpt.h"

namespace potop {

BodyConfig gpt_shape(const GPTConfig& c) { return gpt2_body(validated(c), /*causal=*/true); }

}  // namespace potop
