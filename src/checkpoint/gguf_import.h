// `potop import FILE.gguf --out NEW`: a GGUF file of llama.cpp's "gpt2" or "llama" architecture
// as a potop model directory (docs/import.md). The file (checkpoint/gguf_file.h) is mapped and
// read tensor by tensor; general.architecture picks the row of the kinds table that reads it
// (ModelKind::gguf_architecture, import_gguf). f32, f16 and bf16 tensors become float32; q8_0 and
// q4_0 matrices stay as they are (ParameterFiller). The tokenizer comes from the file's
// tokenizer.ggml.* keys:
//   "gpt2"   byte-level BPE: its tokens and merges as a byte_bpe tokenizer; a vocabulary whose
//            every token is one character (what potop writes for a char model) as char
//   "llama"  SentencePiece BPE: its pieces, scores and types as a SentencePiece model (bpe)
// Any other tensor type, architecture or tokenizer model: one line naming it, nothing written.
#pragma once
#include <filesystem>
#include <memory>

#include "checkpoint/gguf_file.h"
#include "checkpoint/hf_import.h"
#include "tokenizer/tokenizer.h"

namespace potop {

ImportSummary import_gguf_file(const std::filesystem::path& src, const std::filesystem::path& out);

// The tokenizer a GGUF file's metadata describes (see above); `from` says which.
std::unique_ptr<Tokenizer> read_gguf_tokenizer(const GgufFile& file, std::string& from);

}  // namespace potop
