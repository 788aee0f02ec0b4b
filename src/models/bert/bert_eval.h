// `potop eval` of a BERT (its row's evaluate): every window of block_size - 2 tokens of a text, in
// order, as [CLS] window [SEP], masked as in training with a fixed seed (--seed), so that two
// models are scored on the same masks: the masked-token loss, its perplexity, and how often the
// top guess is the original token.
#pragma once

#include "nn/model_kind.h"

namespace potop {

EvalResult evaluate_masked_lm(LoadedModel& model, const EvalRequest& request);

}  // namespace potop
