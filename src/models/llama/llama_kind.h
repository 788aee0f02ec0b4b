// The llama row of the table of model kinds (nn/model_kind.h), its name, and a Llama's model directory.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/model_dir.h"
#include "models/llama/llama.h"
#include "nn/model_kind.h"

namespace potop {

inline constexpr const char* kLlamaKind = "llama";

const ModelKind& llama_kind();

// Writes a Llama's config.json and the tokenizer's files (save_model_files); `extra`'s keys join
// config.json (a fine-tuned model's "generation").
void save_model_files(const fs::path& dir, const LlamaConfig& config, const Tokenizer& tokenizer,
                      const nlohmann::json& training, const nlohmann::json& extra = nlohmann::json::object());

using LoadedLlama = LoadedAs<Llama, LlamaConfig>;
LoadedLlama load_llama_dir(const fs::path& dir, const std::string& which = "");

}  // namespace potop
