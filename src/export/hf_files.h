// What every model's Hugging Face export (models/<name>/<name>_hf_export.h, docs/export-hf.md)
// writes the same way, whatever the architecture: the directory itself (new or empty, written
// beside and renamed into place), model.safetensors from tensors under Hugging Face's names, the
// tokenizer files, and generation_config.json. The model's writer says which tensors and what
// config.json holds.
//
//   tokenizer files   byte: tokenizer.json (byte-level BPE, no merges), vocab.json and merges.txt;
//                     byte_bpe: GPT-2's vocab.json and merges.txt, and tokenizer.json with them;
//                     char: tokenizer.json (BPE over characters, no merges); bpe/unigram:
//                     SentencePiece's tokenizer.model; each with tokenizer_config.json
#pragma once
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// One tensor of model.safetensors, owning its values (float32).
struct HfTensor {
  std::string name;
  Shape shape;
  std::vector<float> values;
};

// Refuses, in one line starting "tokenizer: ", a tokenizer with no Hugging Face equivalent (word).
void check_hf_tokenizer(const Tokenizer& tokenizer);
// config.json's bos_token_id, eos_token_id (null where the tokenizer has none) and pad_token_id
// (where it has one): the tokenizer's own ids (potop's 1, 2, 0; GPT-2's 50256).
void add_special_ids(nlohmann::ordered_json& j, const Tokenizer& tokenizer);
// Whether the tokenizer has potop's special tokens (<pad> 0, <bos> 1, <eos> 2, <unk> 3): all of potop's kinds but char.
bool hf_has_specials(const Tokenizer& tokenizer);

// Writes `out_dir` with write(tmp): out_dir must not exist, or be an empty directory (else a
// potop::Error naming it); its parents are created. The files go into a temporary sibling which
// is renamed to out_dir at the end, so a failure leaves no half-written directory behind.
void write_hf_directory(const std::filesystem::path& out_dir,
                        const std::function<void(const std::filesystem::path& tmp)>& write);

// model.safetensors: the tensors in order, F32, with the metadata format "pt" transformers requires.
void write_hf_safetensors(const std::filesystem::path& path, const std::vector<HfTensor>& tensors);
// The tokenizer's files (see above) into dir; model_max_length is the model's context length; a
// `chat_template` (Jinja; empty: none) goes into tokenizer_config.json.
void write_hf_tokenizer_files(const Tokenizer& tokenizer, int model_max_length, const std::filesystem::path& dir,
                              const std::string& chat_template = "");
// generation_config.json: bos/eos/pad ids (when the tokenizer has them) and max_length.
void write_hf_generation_config(const Tokenizer& tokenizer, int max_length, const std::filesystem::path& dir);
// JSON as the files are written: two-space indented, a final newline.
std::string hf_json_text(const nlohmann::ordered_json& j);

}  // namespace potop
