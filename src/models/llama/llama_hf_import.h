// A Hugging Face LlamaForCausalLM directory as a potop Llama (`potop import`; docs/import.md), the
// inverse of llama_hf_export.h: q_proj, k_proj and v_proj become the columns of potop's fused
// qkv_proj, gate_proj and up_proj those of gate_up_proj, nn.Linear's (out, in) weights are
// transposed to potop's (in, out). Grouped-query attention (num_key_value_heads), a tied or
// untied head, rms_norm_eps and rope_theta are kept. What potop's Llama cannot compute exactly is
// refused in one line naming the field: rope_scaling, biases, another activation than SiLU, a
// head_dim other than hidden_size / num_attention_heads.
#pragma once
#include "nn/foreign_model.h"

namespace potop {

ImportedModel import_llama_hf(const ImportRequest& request);

}  // namespace potop
