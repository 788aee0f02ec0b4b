// Where each tensor of a decoder lives in the files of other programs: one table per architecture
// (as llama.cpp's llama-arch.cpp keeps one per architecture for loading and conversion), which
// Hugging Face import and export and GGUF import and export all read, so that an architecture's
// file names are written once. potop's own names are the body's (BodyNames, nn/body_config.h);
// a row names a part of the body and the foreign tensor that is that part, or a column block of it
// (potop fuses Q, K and V into one matrix, a Llama's gate and up into another).
//
// Layouts: potop keeps a matrix (in, out); Hugging Face keeps it as nn.Linear (out, in) (a Llama)
// or as GPT-2's Conv1D (in, out); GGUF always as `out` rows of `in`, the rows of a rotary Q or K
// head in llama.cpp's interleaved order (kernels/rope.h).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "export/gguf_tensors.h"
#include "export/hf_files.h"
#include "models/decoder/causal_decoder.h"
#include "nn/foreign_model.h"
#include <nlohmann/json.hpp>

namespace potop {

enum class DecoderPart {
  kTokenTable, kPositionTable,                 // tables: rows as they are
  kAttentionNorm, kQkv, kAttentionOut,         // block l's
  kMlpNorm, kMlpIn, kMlpOut,
  kFinalNorm, kLmHead,                         // an untied head's table
};
// A column block of a fused potop matrix (and the same block of its bias): Q, K or V of [Q K V],
// gate or up of [gate up]; kAll the whole.
enum class Columns { kAll, kQ, kK, kV, kGate, kUp };

struct TensorName {
  DecoderPart part;
  bool bias;         // the part's bias, else its weight
  const char* hf;    // "{l}" stands for the block's number
  const char* gguf;
  Columns columns = Columns::kAll;
};

struct TensorTable {
  std::vector<TensorName> names;  // in the order files are written
  bool hf_linear = true;          // Hugging Face's matrices are nn.Linear (out, in); false: Conv1D (in, out)
  // A prefix Hugging Face puts before the body's names in some files and not in others (GPT-2's
  // "transformer.": GPT2LMHeadModel's files have it, GPT2Model's not); import takes either.
  std::string hf_optional_prefix;
  std::vector<std::string> hf_buffers;  // block l's tensors in Hugging Face's files that are no parameters
  // The order of potop's gpt2 writer: the tables and the final norm, then the blocks.
  bool gguf_globals_first = false;
};

enum class ForeignFormat { kHuggingFace, kGguf };

// Fills every parameter of a decoder of `shape` from the foreign tensors named by the table: Hugging
// Face's (without the optional prefix when the file's token table lacks it) or GGUF's. A tied
// head's copy in the file must equal the token table; an untied one fills the head.
void fill_decoder(ParameterFiller& fill, const TensorTable& table, const BodyConfig& shape, ForeignFormat format,
                  const ForeignTensors& tensors);

// A decoder built from a foreign file's config, filled by fill_decoder and checked whole
// (ParameterFiller::finish, naming `architecture`): the imported model with `config`, its JSON, and
// the filler's notes.
ImportedModel imported_decoder(std::unique_ptr<CausalDecoder> model, nlohmann::json config, const TensorTable& table,
                               ForeignFormat format, const ForeignTensors& tensors, const std::string& architecture);

// The foreign name of a part outside the blocks (the token table, the head, ...); "" when the
// table has none.
std::string foreign_name(const TensorTable& table, DecoderPart part, ForeignFormat format);

// The decoder's tensors under Hugging Face's names and layouts, in the table's order: a bias the
// model lacks as zeros (x·W + 0 = x·W), sinusoidal positions as their table, no head when tied.
std::vector<HfTensor> decoder_hf_tensors(const CausalDecoder& model, const TensorTable& table);

// The decoder's tensors under llama.cpp's names into t: tables (the token table, an untied head) and
// matrices in the weight type, the position table and vectors f32.
void write_decoder_gguf_tensors(const CausalDecoder& model, const TensorTable& table, GgufTensors& t, GgmlType weights);

// llama.cpp rotates adjacent pairs (2i, 2i + 1) where Hugging Face (and potop) rotate (i, i + D/2):
// the rows of W_q and W_k are permuted to match, as convert_hf_to_gguf.py's permute does. `w` holds
// heads × D rows of `in` values (nn.Linear's layout); row h·D + j·D/2 + i moves to h·D + 2i + j.
std::vector<float> interleave_rope_rows(const std::vector<float>& w, int heads, int D, int64_t in);
// The inverse, as a row order for ParameterFiller::linear_columns: potop's row h·D + j·D/2 + i is
// the GGUF file's row h·D + 2i + j.
std::vector<int64_t> rope_rows_from_interleaved(int heads, int D);

}  // namespace potop
