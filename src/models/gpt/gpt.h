// The GPT: the causal decoder (models/decoder/causal_decoder.h) in GPT-2's shape — LayerNorm
// pre-LN (GPT-2, a final ln_f) or post-LN (the paper), GELU or ReLU, learned or sinusoidal
// positions, biases, the output head tied to wte — with Hugging Face GPT-2's names
// (h.0.attn.c_attn.weight stored (in, out), ...). Its config is the Transformer body's.
#pragma once

#include "models/decoder/decoder_of.h"
#include "models/gpt/gpt_config.h"

namespace potop {

// The decoder's switches for a GPT config, validated (an Error naming the field).
BodyConfig gpt_shape(const GPTConfig& config);

using GPT = DecoderOf<GPTConfig, gpt_shape>;

}  // namespace potop
