// Loading a bag-of-words LM (models/bow/bow.h) written by `potop bow train`: its model directory
// (config.json with "kind": "bow", the tokenizer's files, the checkpoints) or one of its
// .safetensors files alone, through the one loader of every kind (checkpoint/model_dir.h).
#pragma once
#include <filesystem>
#include <string>

#include "checkpoint/model_dir.h"
#include "models/bow/bow.h"
#include "models/bow/bow_kind.h"

namespace potop {

namespace fs = std::filesystem;


using LoadedBow = LoadedAs<BowLM, BowConfig>;

// `which` as for load_model_dir (best, latest, resume, step-N, a path; empty: the newest not
// worse than best). A directory or file of another kind of model (a GPT) is an Error naming it.
LoadedBow load_bow_dir(const fs::path& dir, const std::string& which = "");

}  // namespace potop
