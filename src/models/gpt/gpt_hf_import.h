// A Hugging Face GPT-2 directory as a potop GPT (`potop import`; docs/import.md), the inverse of
// gpt_hf_export.h: GPT2LMHeadModel's or GPT2Model's tensors, with or without the "transformer."
// prefix, Conv1D weights (in, out) as potop stores them. The causal-mask buffers some files hold
// (h.<l>.attn.bias, h.<l>.attn.masked_bias) are skipped; an lm_head.weight must equal wte (tied).
// activation_function gelu_new/gelu_pytorch_tanh (potop's gelu), gelu (erf: gelu-erf) or relu, and
// layer_norm_epsilon, are honoured. What potop's GPT cannot compute exactly is refused in one line
// naming the field: another activation, n_inner other than 4 · n_embd, attention scaled other
// than by 1/√head size.
#pragma once
#include "nn/foreign_model.h"

namespace potop {

ImportedModel import_gpt2_hf(const ImportRequest& request);

}  // namespace potop
