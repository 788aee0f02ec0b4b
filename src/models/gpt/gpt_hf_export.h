// A potop GPT as a Hugging Face GPT-2 directory (`potop export --format hf`; docs/export-hf.md):
//
//   config.json              GPT2Config: model_type "gpt2", architectures ["GPT2LMHeadModel"], the
//                            shape, gelu_new, potop's LayerNorm eps, dropout, special token ids
//   generation_config.json   bos/eos/pad ids and max_length (n_positions)
//   model.safetensors        GPT2LMHeadModel's tensor names (transformer.wte.weight, ...,
//                            transformer.h.<l>.attn.c_attn.weight as (in, out) like GPT-2's
//                            Conv1D), F32; lm_head.weight is left out, tied to wte as
//                            transformers' save_pretrained leaves it out
//   tokenizer files          byte: tokenizer.json (byte-level BPE, no merges), vocab.json and
//                            merges.txt; char: tokenizer.json (BPE over characters, no merges);
//                            bpe/unigram: SentencePiece's tokenizer.model; each with
//                            tokenizer_config.json
//
// What GPT-2 cannot express is refused with a potop::Error naming the field: a post-LN model
// (norm), ReLU (activation), the word tokenizer. Sinusoidal positions are written as the table
// potop computes (transformer.wpe.weight), and a model without biases gets zero biases.
#pragma once
#include <filesystem>

#include "models/gpt/gpt_kind.h"

namespace potop {

// Writes `out_dir` as a Hugging Face GPT-2 directory. out_dir must not exist, or be an empty
// directory (else a potop::Error naming it); its parents are created. The files are written into
// a temporary sibling which is renamed to out_dir at the end, so a failure leaves no half-written
// directory behind.
// `chat_template` (Jinja; empty: none) goes into tokenizer_config.json.
void export_hf(const GPT& model, const Tokenizer& tokenizer, const std::filesystem::path& out_dir,
               const std::string& chat_template = "");
void export_hf(const LoadedGpt& model, const std::filesystem::path& out_dir);

}  // namespace potop
