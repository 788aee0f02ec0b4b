// A GGUF file of llama.cpp's "llama" architecture as a potop Llama (`potop import FILE.gguf`;
// docs/import.md), the inverse of llama_gguf.h: the table there read backwards, attn_q and attn_k
// rows put back from llama.cpp's adjacent rotary pairs into Hugging Face's halves, q/k/v and
// gate/up fused as potop keeps them. No output.weight means the head is tied to token_embd.
// Keys: llama.context_length, embedding_length, block_count, feed_forward_length,
// attention.head_count, head_count_kv, rope.dimension_count (the whole head), rope.freq_base,
// attention.layer_norm_rms_epsilon; rope scaling (rope.scaling.type other than none, a
// rope_freqs tensor) is refused in one line naming it. q8_0 and q4_0 matrices stay quantized.
#pragma once
#include "nn/foreign_model.h"

namespace potop {

ImportedModel import_llama_gguf(const ImportRequest& request);

}  // namespace potop
