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

#include "nn/model_kind.h"

namespace potop {

struct ImportSummary {
  std::string architecture;  // "GPT2LMHeadModel"
  const ModelKind* kind = nullptr;
  std::string dtypes;        // the stored types, "F32" or "BF16, F32"
  size_t tensors = 0;        // in the files
  size_t parameters = 0;
  std::string tokenizer;     // "byte_bpe, 50257 tokens, from vocab.json and merges.txt"
  std::string chat_template; // the Jinja source kept in config.json ("": none)
  std::vector<std::string> notes;
};

ImportSummary import_hf_dir(const std::filesystem::path& src, const std::filesystem::path& out);

// What every import ends with (a Hugging Face directory's, a GGUF file's): the model's config
// normalized by its kind, then `out` written whole or not at all: config.json (with "imported":
// `provenance`, and "quantized" when matrices stayed quantized), the tokenizer's files and
// latest.safetensors. The model's ends of text ("generation": {"eos_token_ids"}, model_dir.h's
// end_of_text_ids) are the tokenizer's eos and `eos_ids` (a Hugging Face generation_config.json's).
// A `chat_template` (Jinja source; empty: none) goes into config.json's "chat_template", which
// `potop serve` renders its chats with. Fills s.notes and s.parameters.
void write_imported_model(const std::filesystem::path& out, ImportedModel& model, const Tokenizer& tokenizer,
                          nlohmann::json provenance, ImportSummary& s, const std::vector<int>& eos_ids = {},
                          const std::string& chat_template = "");
// A Hugging Face directory's chat template: chat_template.jinja (what newer transformers save),
// else tokenizer_config.json's "chat_template"; empty when it has none.
std::string read_hf_chat_template(const std::filesystem::path& dir);
// tokenizer_config.json's "chat_template": a string, or named templates (the "default" one); empty
// when absent or null. Anything else is an Error naming `source`.
std::string hf_chat_template(const nlohmann::json& tokenizer_config, const std::string& source);
// `--out` must be new or empty: an Error naming it otherwise.
void check_import_out(const std::filesystem::path& out);

// The tokenizer of a Hugging Face directory (see above); `from` says which files it came from.
std::unique_ptr<Tokenizer> read_hf_tokenizer(const std::filesystem::path& dir, std::string& from);

// Whether config.json j is a Hugging Face model's rather than potop's (for a clearer error when a
// command is given one before it is imported).
bool is_hf_config(const nlohmann::json& j);

}  // namespace potop
