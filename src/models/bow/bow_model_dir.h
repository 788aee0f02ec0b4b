// Loading a bag-of-words LM (model/bow.h) written by `potop bow train`: its model directory
// (config.json with "kind": "bow", the tokenizer's files, the checkpoints) or one of its
// .safetensors files alone. The files are those of any model directory (model_dir.h).
#pragma once
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/safetensors.h"
#include "models/bow/bow.h"
#include "tokenizer/tokenizer.h"

namespace potop {

namespace fs = std::filesystem;

inline constexpr const char* kBowKind = "bow";

struct LoadedBow {
  BowConfig config;
  std::unique_ptr<BowLM> model;
  std::unique_ptr<Tokenizer> tokenizer;
  nlohmann::json training;  // options it was trained with (empty for a lone weights file)
  fs::path weights;
  std::string choice;  // which checkpoint, and why (choose_checkpoint)
};

// `which` as for load_model_dir (best, latest, resume, step-N, a path; empty: the newest not
// worse than best). A directory or file of another kind of model (a GPT) is an Error naming it.
LoadedBow load_bow_dir(const fs::path& dir, const std::string& which = "");

}  // namespace potop
