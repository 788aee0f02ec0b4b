// `potop train --arch llama`: the GPT's data, tokenizers and run kit around a Llama.
#pragma once
#include <cstdio>

#include "models/llama/llama_options.h"
#include "train/run.h"
#include "train/run_control.h"

namespace potop {

// Throws potop::Error for every bad input (file, flag, directory, checkpoint), and when a
// step's loss or gradient norm is not finite (unless options.skip_nonfinite).
RunResult train_llama(const LlamaOptions& options, std::FILE* log = stderr, const RunControl& control = {});
// Its row of `potop train --arch` (models/decoder/decoder_trainer.h).
struct DecoderArch;
DecoderArch llama_arch();

}  // namespace potop
