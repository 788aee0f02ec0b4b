// A potop Llama as a Hugging Face LlamaForCausalLM directory (`potop export --format hf`;
// docs/export-hf.md):
//
//   config.json              LlamaConfig: model_type "llama", architectures ["LlamaForCausalLM"],
//                            the shape (hidden_size, intermediate_size, num_attention_heads,
//                            num_key_value_heads, num_hidden_layers, max_position_embeddings),
//                            rms_norm_eps, rope_theta, hidden_act silu, no biases, tie_word_embeddings
//   generation_config.json   bos/eos/pad ids and max_length, as the GPT's
//   model.safetensors        LlamaForCausalLM's tensor names, F32, each matrix as nn.Linear holds
//                            it, (out, in): potop's (in, out) transposed, and its fused tensors
//                            split — self_attn.qkv_proj into q_proj, k_proj, v_proj (its column
//                            blocks), mlp.gate_up_proj into gate_proj and up_proj; lm_head.weight
//                            only for an untied head (transformers' save_pretrained leaves a tied
//                            one out)
//   tokenizer files          as the GPT's (export/hf_files.h)
//
// potop's rotary embedding is Hugging Face's (rotate_half, rope.h), so q_proj and k_proj are
// written as they are. The word tokenizer is refused, as for the GPT.
#pragma once
#include <filesystem>
#include <vector>

#include "export/hf_files.h"
#include "models/llama/llama.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// Writes `out_dir` as a Hugging Face Llama directory: new or empty, written beside and renamed
// into place (write_hf_directory), so a failure leaves nothing. Throws potop::Error naming what a
// LlamaForCausalLM cannot hold.
// `chat_template` (Jinja; empty: none) goes into tokenizer_config.json.
void export_hf(const Llama& model, const Tokenizer& tokenizer, const std::filesystem::path& out_dir,
               const std::string& chat_template = "");

}  // namespace potop
