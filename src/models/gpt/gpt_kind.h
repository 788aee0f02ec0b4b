// The gpt row of the table of model kinds (models/kinds.h).
#pragma once
#include "models/kinds.h"

namespace potop {

const ModelKind& gpt_kind();

}  // namespace potop
