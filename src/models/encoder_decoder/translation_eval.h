// `potop eval` of a translation model (its row's evaluate): a TSV of sentence pairs (by default
// the test.tsv its training run held out), the loss of each reference target given its source,
// per target token (</s> included), over every pair that fits the model's block size.
#pragma once

#include "nn/model_kind.h"

namespace potop {

EvalResult evaluate_pairs(LoadedModel& model, const EvalRequest& request);

}  // namespace potop
