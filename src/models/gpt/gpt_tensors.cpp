#include "models/gpt/gpt_tensors.h"

namespace potop {

const TensorTable& gpt2_tensor_table() {
  using P = DecoderPart;
  static const TensorTable table{
      .names = {{P::kTokenTable, false, "transformer.wte.weight", "token_embd.weight"},
                {P::kPositionTable, false, "transformer.wpe.weight", "position_embd.weight"},
                {P::kAttentionNorm, false, "transformer.h.{l}.ln_1.weight", "blk.{l}.attn_norm.weight"},
                {P::kAttentionNorm, true, "transformer.h.{l}.ln_1.bias", "blk.{l}.attn_norm.bias"},
                {P::kQkv, false, "transformer.h.{l}.attn.c_attn.weight", "blk.{l}.attn_qkv.weight"},
                {P::kQkv, true, "transformer.h.{l}.attn.c_attn.bias", "blk.{l}.attn_qkv.bias"},
                {P::kAttentionOut, false, "transformer.h.{l}.attn.c_proj.weight", "blk.{l}.attn_output.weight"},
                {P::kAttentionOut, true, "transformer.h.{l}.attn.c_proj.bias", "blk.{l}.attn_output.bias"},
                {P::kMlpNorm, false, "transformer.h.{l}.ln_2.weight", "blk.{l}.ffn_norm.weight"},
                {P::kMlpNorm, true, "transformer.h.{l}.ln_2.bias", "blk.{l}.ffn_norm.bias"},
                {P::kMlpIn, false, "transformer.h.{l}.mlp.c_fc.weight", "blk.{l}.ffn_up.weight"},
                {P::kMlpIn, true, "transformer.h.{l}.mlp.c_fc.bias", "blk.{l}.ffn_up.bias"},
                {P::kMlpOut, false, "transformer.h.{l}.mlp.c_proj.weight", "blk.{l}.ffn_down.weight"},
                {P::kMlpOut, true, "transformer.h.{l}.mlp.c_proj.bias", "blk.{l}.ffn_down.bias"},
                {P::kFinalNorm, false, "transformer.ln_f.weight", "output_norm.weight"},
                {P::kFinalNorm, true, "transformer.ln_f.bias", "output_norm.bias"},
                {P::kLmHead, false, "lm_head.weight", "output.weight"}},
      .hf_linear = false,
      .hf_optional_prefix = "transformer.",
      .hf_buffers = {"transformer.h.{l}.attn.bias", "transformer.h.{l}.attn.masked_bias"},  // the causal mask
      .gguf_globals_first = true,
  };
  return table;
}

}  // namespace potop
