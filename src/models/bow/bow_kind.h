// The bow row of the table of model kinds (models/kinds.h).
#pragma once
#include "nn/model_kind.h"

namespace potop {

const ModelKind& bow_kind();

}  // namespace potop
