// A Hugging Face GPT-2 directory as a potop GPT (`potop import`; docs/import.md), the inverse of
// gpt_hf_export.h: GPT2LMHeadModel's or GPT2Model's tensors, with or without the "transformer."
// prefix, Conv1D weights (in, out) as potop stores them. The causal-mask buffers some files hold
// (h.<l>.attn.bias, h.<l>.attn.masked_bias) are skipped; an lm_head.weight must equal wte (tied).
// What potop's GPT cannot compute exactly is refused in one line naming the field: another
// activation than the tanh GELU (gelu_new), a LayerNorm eps other than 1e-5, n_inner other than
// 4 · n_embd, attention scaled other than by 1/√head size.
#pragma once
#include "nn/foreign_model.h"

namespace potop {

ImportedModel import_gpt2_hf(const ImportRequest& request);

}  // namespace potop
