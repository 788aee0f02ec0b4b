// What every import ends with — a Hugging Face directory's (hf_import.h), a GGUF file's
// (gguf_import.h): the output directory checked before anything is read, the weights checked
// finite, and the model directory written whole or not at all.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "nn/foreign_model.h"
#include "nn/model_kind.h"
#include "tokenizer/tokenizer.h"

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
// `--out` must be new or empty: an Error naming it otherwise.
void check_import_out(const std::filesystem::path& out);

}  // namespace potop
