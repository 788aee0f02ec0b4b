// BERT's row of the kinds table (nn/model_kind.h), and its loader.
#pragma once
#include <filesystem>
#include <string>

#include "checkpoint/model_dir.h"
#include "models/bert/bert.h"
#include "nn/model_kind.h"

namespace potop {

inline constexpr const char* kBertKind = "bert";

const ModelKind& bert_kind();

using LoadedBert = LoadedAs<Bert, BertConfig>;
// `which` as for load_model_dir; another kind of model is an Error naming the command it takes.
LoadedBert load_bert_dir(const std::filesystem::path& dir, const std::string& which = "");

}  // namespace potop
