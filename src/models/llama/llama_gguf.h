// A potop Llama as llama.cpp's "llama" architecture (src/models/llama.cpp there), written the way
// llama.cpp's convert_hf_to_gguf.py writes a LlamaForCausalLM: Hugging Face's tensors
// (llama_hf_tensors, the fused ones split, (out, in) rows) under llama.cpp's names and keys.
//
//   Hugging Face (llama_hf_export.h)           GGUF                     ne (fastest first)
//   model.embed_tokens.weight (V, C)           token_embd.weight        {C, V}
//   model.layers.N.input_layernorm.weight      blk.N.attn_norm.weight   {C}
//   model.layers.N.self_attn.q_proj.weight     blk.N.attn_q.weight      {C, H·D}    rows permuted (below)
//   model.layers.N.self_attn.k_proj.weight     blk.N.attn_k.weight      {C, Hkv·D}  rows permuted (below)
//   model.layers.N.self_attn.v_proj.weight     blk.N.attn_v.weight      {C, Hkv·D}
//   model.layers.N.self_attn.o_proj.weight     blk.N.attn_output.weight {C, C}
//   model.layers.N.post_attention_layernorm    blk.N.ffn_norm.weight    {C}
//   model.layers.N.mlp.gate_proj.weight        blk.N.ffn_gate.weight    {C, F}
//   model.layers.N.mlp.up_proj.weight          blk.N.ffn_up.weight      {C, F}
//   model.layers.N.mlp.down_proj.weight        blk.N.ffn_down.weight    {F, C}
//   model.norm.weight                          output_norm.weight       {C}
//   lm_head.weight (untied only)               output.weight            {C, V}  (tied: llama.cpp reads token_embd)
//
// llama.cpp's llama rotates adjacent pairs (2i, 2i + 1) of a head ("normal" RoPE), potop and
// Hugging Face the pair (i, i + D/2) (rope.h). As convert_hf_to_gguf.py's LlamaModel.permute, the
// D rows of each Q and K head are reordered so that value i + j·D/2 (j = 0, 1) goes to row 2i + j:
// the same attention scores, pairs made adjacent. keys: llama.context_length (block_size),
// embedding_length, block_count, feed_forward_length, attention.head_count, head_count_kv,
// rope.dimension_count (D: every value rotates), rope.freq_base (rope_theta),
// attention.layer_norm_rms_epsilon (norm_eps), vocab_size; the tokenizer as the GPT's
// (export/gguf_vocab.h).
#pragma once
#include <string>
#include <vector>

#include "export/gguf_writer.h"
#include "models/llama/llama.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// The GGUF of model and tokenizer, weight matrices (token embedding and output head included) in
// `weights`, norms f32. `name` goes to general.name. Notes for the user are appended to notes.
// Throws potop::Error for a tokenizer llama.cpp cannot hold or one that does not fit the model.
GgufWriter llama_gguf(const Llama& model, const Tokenizer& tokenizer, GgmlType weights, const std::string& name,
                      std::vector<std::string>& notes);

// The rows of a (heads · D, in) projection, per head, from Hugging Face's rotate_half order to
// llama.cpp's adjacent pairs: row h·D + j·D/2 + i goes to row h·D + 2i + j.
std::vector<float> interleave_rope_rows(const std::vector<float>& w, int heads, int D, int64_t in);
// Its inverse as a row order (ParameterFiller::linear_columns' row_order): Hugging Face's row
// h·D + j·D/2 + i is llama.cpp's row h·D + 2i + j.
std::vector<int64_t> rope_rows_from_interleaved(int heads, int D);

}  // namespace potop
