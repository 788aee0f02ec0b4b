// The classifier row of the table of model kinds (nn/model_kind.h), and loading a classifier's
// model directory (or one of its weights files) through the one loader.
#pragma once
#include <filesystem>
#include <string>

#include "checkpoint/model_dir.h"
#include "models/classifier/classifier.h"
#include "nn/model_kind.h"

namespace potop {

inline constexpr const char* kClassifierKind = "classifier";

const ModelKind& classifier_kind();

using LoadedClassifier = LoadedAs<Classifier, ClassifierConfig>;
// `which` as for load_model_dir; another kind is an Error naming the command that takes it.
LoadedClassifier load_classifier_dir(const std::filesystem::path& dir, const std::string& which = "");

}  // namespace potop
