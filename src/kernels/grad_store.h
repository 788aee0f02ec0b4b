// How a backward kernel stores the gradient of an activation.
#pragma once

namespace potop {

// kAccumulate (the default everywhere): dinp += …, so gradients reaching a tensor along several
// paths sum up. kOverwrite: dinp = …, for a caller whose buffer holds nothing yet — it saves
// zeroing the buffer first and reading it back. Parameter gradients always accumulate.
enum class GradStore { kAccumulate, kOverwrite };

}  // namespace potop
