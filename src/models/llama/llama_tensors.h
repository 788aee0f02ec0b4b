// The Llama's tensors in Hugging Face's LlamaForCausalLM files and llama.cpp's llama GGUF: the one
// table the Llama's imports and exports read (models/decoder/tensor_table.h). potop fuses
// q/k/v_proj into self_attn.qkv_proj and gate/up_proj into mlp.gate_up_proj; the table names the
// column block each file's tensor is.
#pragma once

#include "models/decoder/tensor_table.h"

namespace potop {

const TensorTable& llama_tensor_table();

}  // namespace potop
