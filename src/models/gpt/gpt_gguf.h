// A potop GPT as llama.cpp's "gpt2" architecture (src/models/gpt2.cpp there): the same graph —
// learned positions added to the token embeddings, pre-LN blocks of fused-QKV causal attention
// and a GELU (tanh) MLP, every linear map and LayerNorm with a bias, a final LayerNorm, and the
// output projection tied to the token embeddings — under llama.cpp's keys and tensor names
// (gpt_tensors.h: the one table the GPT's imports and exports read). The token table is written
// in the weight type, the position table f32 (always), matrices transposed (`out` rows of `in`).
//
// A model without biases gets zero bias tensors (llama.cpp requires them); sinusoidal positions
// are written as their table, computed by the function the model uses. Post-LN and ReLU have no
// counterpart in llama.cpp's gpt2 and are refused.
#pragma once
#include <string>
#include <vector>

#include "export/gguf_writer.h"
#include "models/gpt/gpt.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// The GGUF of model and tokenizer. `name` goes to general.name. Lines for the user (fallbacks,
// what llama.cpp does differently) are appended to notes. Throws potop::Error naming the config
// field or tokenizer that llama.cpp cannot hold.
GgufWriter gpt2_gguf(const GPT& model, const Tokenizer& tokenizer, GgmlType weights, const std::string& name,
                     std::vector<std::string>& notes);

}  // namespace potop
