// `potop import DIR --out NEW`: a Hugging Face model directory as a potop model directory
// (docs/import.md). DIR holds
//   config.json                     its "architectures" picks the row of the kinds table that
//                                   reads it (ModelKind::hf_architectures, import_hf)
//   model.safetensors, or           the tensors, F32, F16 or BF16 (converted to float32),
//   model.safetensors.index.json    memory-mapped and read one at a time, each released after use,
//     and its shards                so that a file costs its model's floats, not twice that
//   vocab.json + merges.txt, or     its tokenizer: GPT-2's byte-level BPE (byte_bpe), or
//   tokenizer.model                 SentencePiece's model (bpe or unigram)
// NEW gets config.json, the tokenizer's files and latest.safetensors, written as a whole or not
// at all. A pytorch_model.bin without safetensors, an architecture no kind reads, a tensor type
// other than those three, a config potop's model would compute differently: one line naming the
// file and field, and nothing written.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/import_model.h"
#include "nn/model_kind.h"

namespace potop {

ImportSummary import_hf_dir(const std::filesystem::path& src, const std::filesystem::path& out);

// A Hugging Face directory's chat template: chat_template.jinja (what newer transformers save),
// else tokenizer_config.json's "chat_template"; empty when it has none.
std::string read_hf_chat_template(const std::filesystem::path& dir);
// tokenizer_config.json's "chat_template": a string, or named templates (the "default" one); empty
// when absent or null. Anything else is an Error naming `source`.
std::string hf_chat_template(const nlohmann::json& tokenizer_config, const std::string& source);
// The tokenizer of a Hugging Face directory (see above); `from` says which files it came from.
std::unique_ptr<Tokenizer> read_hf_tokenizer(const std::filesystem::path& dir, std::string& from);

// Whether config.json j is a Hugging Face model's rather than potop's (for a clearer error when a
// command is given one before it is imported).
bool is_hf_config(const nlohmann::json& j);

}  // namespace potop
