// Weights files: the one place potop writes and reads a model's parameters (checkpoint/ is the
// only writer and reader of weights; the training state in train_state.h builds on this).
//
// A weights file is a safetensors file (core/safetensors.h) holding the parameter set's tensors
// in layout order, under their layout names, and metadata that makes the file usable on its own:
//   potop.model       the model's kind ("gpt")
//   potop.config      its config (JSON)
//   potop.tokenizer   its tokenizer (JSON, Tokenizer::to_json)
//   potop.vocab_hash  the tokenizer's hash (16 hex digits), checked against a model directory's
// plus what the caller adds (step, train_loss, val_loss). docs/checkpoint-format.md has it all.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "nn/parameters.h"
#include "tokenizer/tokenizer.h"

namespace potop {

namespace fs = std::filesystem;

// What a checkpoint says about its model beyond the tensors.
struct ModelHeader {
  std::string kind;  // its row of the kinds table (nn/model_kind.h): "gpt", "bow", ...
  nlohmann::json config;
  const Tokenizer* tokenizer = nullptr;
};

// Extra tensors a checkpoint carries beside the parameters, with the parameters' layout and
// names under a prefix: AdamW's moments in a training state ("adamw.m.", "adamw.v.").
struct TensorGroup {
  std::string prefix;
  Arena* arena;
};

// Writes the parameters (and the groups' tensors after them) atomically, with the header and
// `metadata`. The metadata key potop.tensor_groups lists the groups' prefixes.
void save_weights(const fs::path& path, const ParameterSet& params, const ModelHeader& header, Metadata metadata = {},
                  const std::vector<TensorGroup>& groups = {});

// The file must hold exactly the layout's tensors, F32 with the layout's shapes, plus the
// tensors of the groups it declares (potop.tensor_groups). Errors name the file and the tensor.
void check_weights(const SafetensorsFile& file, const Layout& layout);
// check_weights, then copies every parameter into params.
void load_weights(const SafetensorsFile& file, ParameterSet& params);
// Copies the tensors of each group (present, checked) into its arena.
void load_group_tensors(const SafetensorsFile& file, const Layout& layout, const std::vector<TensorGroup>& groups);

// Quantized models (potop quantize): the matrices listed in the metadata key potop.quantized
// ({"h.0.mlp.c_fc.weight": "q8_0", ...}) are stored as Wᵀ's rows — F16 (out, in) for f16, the
// bytes of llama.cpp's blocks U8 (out, row bytes) for q8_0 and q4_0 — and load as the
// parameter set's QuantizedMatrix; save_weights writes a set's quantized matrices that way.
// "q8_0" (or "q8_0+f16"), "" for a file of floats.
// `path` names the file in errors.
std::string read_quantization(const Metadata& metadata, const std::string& path);
// Throws "<where>: is a quantized model, for inference only; <what> needs its float weights ..."
// when the metadata is a quantized file's: training, fine-tuning and resuming refuse one.
void refuse_quantized(const Metadata& metadata, const std::string& where, const std::string& what);

// The header's parts read back; each absent key gives an empty value.
std::string read_model_kind(const SafetensorsFile& file);                       // "" when absent
nlohmann::json read_model_config(const SafetensorsFile& file);                  // null when absent
std::unique_ptr<Tokenizer> read_tokenizer(const SafetensorsFile& file);         // null when absent
std::string read_vocab_hash(const SafetensorsFile& file);                       // "" when absent

}  // namespace potop
