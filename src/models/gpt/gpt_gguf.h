// A potop GPT as llama.cpp's "gpt2" architecture (src/models/gpt2.cpp there): the same graph —
// learned positions added to the token embeddings, pre-LN blocks of fused-QKV causal attention
// and a GELU (tanh) MLP, every linear map and LayerNorm with a bias, a final LayerNorm, and the
// output projection tied to the token embeddings — under llama.cpp's tensor names and keys:
//
//   potop (Hugging Face GPT-2 names)     GGUF                   ne (fastest first)
//   wte.weight (V, C)                    token_embd.weight      {C, V}   (also the output, tied)
//   wpe.weight (T, C)                    position_embd.weight   {C, T}   (always f32)
//   h.N.ln_1.weight/bias                 blk.N.attn_norm.*      {C}
//   h.N.attn.c_attn.weight (C, 3C)       blk.N.attn_qkv.weight  {C, 3C}  (transposed: out rows of in)
//   h.N.attn.c_proj.weight (C, C)        blk.N.attn_output.*    {C, C}
//   h.N.ln_2.weight/bias                 blk.N.ffn_norm.*       {C}
//   h.N.mlp.c_fc.weight (C, 4C)          blk.N.ffn_up.*         {C, 4C}
//   h.N.mlp.c_proj.weight (4C, C)        blk.N.ffn_down.*       {4C, C}
//   ln_f.weight/bias                     output_norm.*          {C}
//
// A model without biases gets zero bias tensors (llama.cpp requires them); sinusoidal positions
// are written as their table, computed by the function the model uses. Post-LN and ReLU have no
// counterpart in llama.cpp's gpt2 and are refused.
#pragma once
#include <string>
#include <vector>

#include "export/gguf_writer.h"
#include "models/gpt/gpt.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// One block's tensors, potop's name part -> llama.cpp's (the table above), read by the export and
// the import (gpt_gguf_import.h). A norm has weight and bias vectors; a linear map a (in, out)
// weight, written as out rows of in, and a bias of `out_widths` · C values.
struct Gpt2GgufPart {
  const char* potop;
  const char* gguf;
  bool linear;
  int out_widths;  // the bias's length in units of C
};
inline constexpr Gpt2GgufPart kGpt2GgufBlock[] = {
    {"ln_1", "attn_norm", false, 1},      {"attn.c_attn", "attn_qkv", true, 3}, {"attn.c_proj", "attn_output", true, 1},
    {"ln_2", "ffn_norm", false, 1},       {"mlp.c_fc", "ffn_up", true, 4},      {"mlp.c_proj", "ffn_down", true, 1},
};

// The GGUF of model and tokenizer. `name` goes to general.name. Lines for the user (fallbacks,
// what llama.cpp does differently) are appended to notes. Throws potop::Error naming the config
// field or tokenizer that llama.cpp cannot hold.
GgufWriter gpt2_gguf(const GPT& model, const Tokenizer& tokenizer, GgmlType weights, const std::string& name,
                     std::vector<std::string>& notes);

}  // namespace potop
