// `potop train` for the GPT: its data (a text or prepared shards), its tokenizer, its model (new,
// fine-tuned from --init-from, or resumed) and its batches; everything else a run does — resume,
// --force, ranks, checkpoints, progress — is the run kit's (train/run_kit.h), shared by every model.
#pragma once
#include <cstdio>

#include "models/gpt/gpt_options.h"
#include "train/run.h"
#include "train/run_control.h"

namespace potop {

// Throws potop::Error for every bad input (file, flag, directory, checkpoint), and when a
// step's loss or gradient norm is not finite (unless options.skip_nonfinite).
RunResult train_gpt(const GptOptions& options, std::FILE* log = stderr, const RunControl& control = {});
// Its row of `potop train --arch` (models/decoder/decoder_trainer.h).
struct DecoderArch;
DecoderArch gpt2_arch();

}  // namespace potop
