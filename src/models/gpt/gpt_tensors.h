// The GPT's tensors in Hugging Face GPT-2's files and llama.cpp's gpt2 GGUF: the one table the
// GPT's imports and exports read (models/decoder/tensor_table.h). Hugging Face's GPT-2 keeps its
// matrices (in, out) (Conv1D), as potop does; GPT2Model's files name the body without
// "transformer.".
#pragma once

#include "models/decoder/tensor_table.h"

namespace potop {

const TensorTable& gpt2_tensor_table();

}  // namespace potop
