// A GGUF file of llama.cpp's "gpt2" architecture as a potop GPT (`potop import FILE.gguf`;
// docs/import.md), the inverse of gpt_gguf.h: token_embd, position_embd, blk.N.{attn_norm,
// attn_qkv, attn_output, ffn_norm, ffn_up, ffn_down}, output_norm, each matrix (out, in) rows as
// nn.Linear's. An output.weight must equal token_embd (potop's GPT ties them). Keys: gpt2.
// context_length, embedding_length, feed_forward_length (4 · embedding_length), block_count,
// attention.head_count, attention.layer_norm_epsilon; anything else is refused in one line
// naming the key. q8_0 and q4_0 matrices stay quantized (nn/foreign_model.h).
#pragma once
#include "nn/foreign_model.h"

namespace potop {

ImportedModel import_gpt2_gguf(const ImportRequest& request);

}  // namespace potop
