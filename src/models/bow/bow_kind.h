// The bow row of the table of model kinds (nn/model_kind.h), and its name.
#pragma once
#include "nn/model_kind.h"

namespace potop {

inline constexpr const char* kBowKind = "bow";

const ModelKind& bow_kind();

}  // namespace potop
