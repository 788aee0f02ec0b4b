#include "models/llama/llama_tensors.h"

namespace potop {

const TensorTable& llama_tensor_table() {
  using P = DecoderPart;
  using C = Columns;
  // convert_hf_to_gguf.py's names for LlamaForCausalLM.
  static const TensorTable table{
      .names = {{P::kTokenTable, false, "model.embed_tokens.weight", "token_embd.weight"},
                {P::kAttentionNorm, false, "model.layers.{l}.input_layernorm.weight", "blk.{l}.attn_norm.weight"},
                {P::kQkv, false, "model.layers.{l}.self_attn.q_proj.weight", "blk.{l}.attn_q.weight", C::kQ},
                {P::kQkv, false, "model.layers.{l}.self_attn.k_proj.weight", "blk.{l}.attn_k.weight", C::kK},
                {P::kQkv, false, "model.layers.{l}.self_attn.v_proj.weight", "blk.{l}.attn_v.weight", C::kV},
                {P::kAttentionOut, false, "model.layers.{l}.self_attn.o_proj.weight", "blk.{l}.attn_output.weight"},
                {P::kMlpNorm, false, "model.layers.{l}.post_attention_layernorm.weight", "blk.{l}.ffn_norm.weight"},
                {P::kMlpIn, false, "model.layers.{l}.mlp.gate_proj.weight", "blk.{l}.ffn_gate.weight", C::kGate},
                {P::kMlpIn, false, "model.layers.{l}.mlp.up_proj.weight", "blk.{l}.ffn_up.weight", C::kUp},
                {P::kMlpOut, false, "model.layers.{l}.mlp.down_proj.weight", "blk.{l}.ffn_down.weight"},
                {P::kFinalNorm, false, "model.norm.weight", "output_norm.weight"},
                {P::kLmHead, false, "lm_head.weight", "output.weight"}},
      .hf_linear = true,
      .hf_optional_prefix = "",
      .hf_buffers = {"model.layers.{l}.self_attn.rotary_emb.inv_freq"},  // the rotary frequencies
      .gguf_globals_first = false,
  };
  return table;
}

}  // namespace potop
