// `potop translate pretrain`: T5's span-corruption pre-training of an encoder-decoder on plain
// text (data/span_corruption.h). Setup only — read and tokenize the text files, pack their lines
// into chunks, hold some out, add the sentinels to the vocabulary, build the model and the
// freshly corrupted batches, evaluate the loss on fixed corruptions of held-out and training
// chunks — and the run kit (train/run_kit.h) does the rest. It writes a model directory of kind
// encoder-decoder that `potop translate train --init-from` fine-tunes.
#pragma once
#include <cstdio>

#include "models/encoder_decoder/pretrain_options.h"
#include "train/run.h"
#include "train/run_control.h"

namespace potop {

RunResult pretrain_encoder_decoder(const PretrainOptions& options, std::FILE* log, const RunControl& control);

}  // namespace potop
