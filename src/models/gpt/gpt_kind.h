// The gpt row of the table of model kinds (nn/model_kind.h), its name, and a GPT's model directory.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/model_dir.h"
#include "models/gpt/gpt.h"
#include "nn/model_kind.h"

namespace potop {

inline constexpr const char* kGptKind = "gpt";

const ModelKind& gpt_kind();

// What every weights file of a GPT says about it.
ModelHeader gpt_header(const GPTConfig& config, const Tokenizer& tokenizer);

// Writes a GPT's config.json and the tokenizer's files (save_model_files); `extra`'s keys join
// config.json (a fine-tuned model's "generation").
void save_model_files(const fs::path& dir, const GPTConfig& config, const Tokenizer& tokenizer,
                      const nlohmann::json& training, const nlohmann::json& extra = nlohmann::json::object());

// A GPT, as its own commands use it.
using LoadedGpt = LoadedAs<GPT, GPTConfig>;
LoadedGpt load_gpt_dir(const fs::path& dir, const std::string& which = "");

}  // namespace potop
