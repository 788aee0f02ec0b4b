// A Llama-style decoder (Touvron et al. 2023): the causal decoder (models/decoder/causal_decoder.h)
// in Llama's shape —
//
//   x      = embed_tokens[tokens]                      no position table: positions are rotary
//   h      = blocks(x): per block, pre-norm residuals  with RMSNorm (no mean, no bias)
//              x ← x + attn(RMSNorm(x))                  causal, grouped-query (n_kv_head K/V
//                                                        heads), RoPE on Q and K
//              x ← x + mlp(RMSNorm(x))                   SwiGLU: down(silu(gate(x)) ⊙ up(x))
//            then RMSNorm_final
//   logits = h · Wᵀ, W = embed_tokens (tied) or lm_head; loss = cross-entropy
//
// No biases anywhere. Parameters use Hugging Face's LlamaForCausalLM names
// (model.layers.<l>.self_attn.o_proj.weight, ...), stored (in, out) like every potop matrix, with
// q/k/v_proj fused into qkv_proj and gate/up_proj into gate_up_proj (llama_body's names).
#pragma once

#include "models/decoder/decoder_of.h"
#include "models/llama/llama_config.h"

namespace potop {

using Llama = DecoderOf<LlamaConfig, llama_body>;

}  // namespace potop
