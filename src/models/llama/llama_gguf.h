// A potop Llama as llama.cpp's "llama" architecture (src/models/llama.cpp there), written the way
// llama.cpp's convert_hf_to_gguf.py writes a LlamaForCausalLM: the fused matrices split into
// Q, K, V and gate, up, each as `out` rows of `in`, under llama.cpp's names (llama_tensors.h: the one
// table the Llama's imports and exports read), an untied head as output.weight (tied: llama.cpp
// reads token_embd).
//
// llama.cpp's llama rotates adjacent pairs (2i, 2i + 1) of a head ("normal" RoPE), potop and
// Hugging Face the pair (i, i + D/2) (kernels/rope.h). As convert_hf_to_gguf.py's LlamaModel.permute,
// the D rows of each Q and K head are reordered so that value i + j·D/2 (j = 0, 1) goes to row
// 2i + j (interleave_rope_rows, models/decoder/tensor_table.h): the same attention scores, pairs
// made adjacent. keys: llama.context_length (block_size), embedding_length, block_count,
// feed_forward_length, attention.head_count, head_count_kv, rope.dimension_count (D: every value
// rotates), rope.freq_base (rope_theta), attention.layer_norm_rms_epsilon (norm_eps), vocab_size;
// the tokenizer as the GPT's (export/gguf_vocab.h).
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

}  // namespace potop
