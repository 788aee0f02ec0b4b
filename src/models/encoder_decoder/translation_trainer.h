// `potop translate train`: an encoder-decoder on a TSV of sentence pairs. Setup only — read and
// split the pairs, train (or restore) the shared subword tokenizer, build the model and the
// length-bucketed batches, evaluate with dev loss and the dev BLEU/chrF of greedy translations —
// and the run kit (train/run_kit.h) does the rest, as for every model.
#pragma once
#include <cstdio>

#include "models/encoder_decoder/translation_options.h"
#include "train/run.h"
#include "train/run_control.h"

namespace potop {

RunResult train_translation(const TranslationOptions& options, std::FILE* log, const RunControl& control);

}  // namespace potop
