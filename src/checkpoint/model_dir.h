// A model directory is everything needed to use a trained model:
//   config.json           {"kind": "gpt", "model": {...GPTConfig...}, "tokenizer": "char",
//                          "training": {...options used...}}
//   vocab.json            the char tokenizer's characters in id order (Tokenizer::save_files)
//   latest.safetensors    weights after the most recent evaluation (or the end of training)
//   best.safetensors      weights with the lowest validation loss so far
//   resume.safetensors    the training state: weights, AdamW moments, step, RNG (train_state.h)
//   step-<N>.safetensors  the same at every N steps, with `potop train --keep N`
//   metrics.jsonl         training metrics, one JSON object per line
// Every file is written atomically, so a crash never leaves a half-written one behind. Each
// weights file also carries the model's config and tokenizer (weights.h), so it can be used on
// its own: load_model_dir accepts a .safetensors file as well as a directory.
#pragma once
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/weights.h"
#include "core/error.h"
#include "core/safetensors.h"
#include "nn/model_kind.h"
#include "tokenizer/tokenizer.h"

namespace potop {

namespace fs = std::filesystem;

// Writes config.json and the tokenizer's files for a model of any kind ("gpt", "bow"):
// config.json holds {"kind", "model": config, "tokenizer", "training"} and the fields of
// `extra`, an object (a translation model's "source" and "target").
void save_model_files(const fs::path& dir, const std::string& kind, const nlohmann::json& config,
                      const Tokenizer& tokenizer, const nlohmann::json& training,
                      const nlohmann::json& extra = nlohmann::json::object());
// config.json of a model directory, parsed; a missing or invalid file is an Error naming it.
nlohmann::json read_config_json(const fs::path& dir);

// Which checkpoint of a model directory to load, and why, in one line for stderr.
struct CheckpointChoice {
  fs::path path;
  std::string why;  // "latest.safetensors: step 812, not evaluated (newer than best.safetensors, …)"
};

// `which` is a short name — "best", "latest", "resume", "step-N" (a --keep snapshot) — or a path
// (also tried inside dir). Empty: the newest weights that are not worse than the best ones: latest
// when it is newer than best and its validation loss (if it has one) is no higher, else best.
// Throws potop::Error naming the file when it does not exist.
CheckpointChoice choose_checkpoint(const fs::path& dir, const std::string& which);

// "step 812, val loss 1.9876" or "step 812, not evaluated" from a checkpoint's metadata.
std::string describe_checkpoint(const Metadata& metadata);

// A model directory's config.json and tokenizer, without its weights: what `potop info` shows.
struct ModelFiles {
  const ModelKind* kind = nullptr;
  nlohmann::json config;  // the model's config, normalized by its kind (every field)
  std::unique_ptr<Tokenizer> tokenizer;
  nlohmann::json training;  // options the model was trained with
  nlohmann::json files;     // config.json as a whole (a translation model's "source", "target", ...)
};
// `kind`, when given, is the kind the caller needs: another is an Error saying which command
// takes it (wrong_kind), before its config is checked.
ModelFiles read_model_files(const fs::path& dir, const std::string& kind = "");

// A model of any kind, loaded.
struct LoadedModel {
  const ModelKind* kind = nullptr;
  nlohmann::json config;  // normalized by its kind
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  nlohmann::json training;  // options the model was trained with, from config.json
  nlohmann::json files;     // config.json as a whole (an empty object for a lone weights file)
  fs::path weights;         // which checkpoint was loaded
  std::string choice;       // which, and why: the line commands print on stderr
  Metadata metadata;        // its metadata (step, val_loss, ...)
};

// The tokens that end a text for this model, where it learned one (config.json's
// "generation": {"eos_token_ids": [...]}, which `potop import` writes from the tokenizer's end of
// text and generation_config.json): generation stops there. Empty for a model potop trained,
// whose texts never end. Ids outside the vocabulary are an Error naming config.json.
std::vector<int> end_of_text_ids(const LoadedModel& m);

// Loads a model directory — config.json, the tokenizer's files and the checkpoint `which` names
// (choose_checkpoint) — or a lone .safetensors file written by potop, whose metadata holds its
// kind, config and tokenizer. The kind (config.json's "kind"; "gpt" when absent, as in older
// directories) picks the row of the table (nn/model_kind.h) that checks the config and the
// tensors and builds the model. `kind`, when given, is the one the caller needs (wrong_kind).
// Every problem (missing directory or file, bad JSON, a config that does not match the tensors,
// a vocabulary that does not match the checkpoint) is a potop::Error naming the file.
LoadedModel load_model_dir(const fs::path& dir, const std::string& which = "", const std::string& kind = "");

// A model of one kind, as its class M with its typed config: what the commands of one kind use.
template <class M, class Config>
struct LoadedAs {
  Config config;
  std::unique_ptr<M> model;
  std::unique_ptr<Tokenizer> tokenizer;
  nlohmann::json training;  // options the model was trained with, from config.json
  fs::path weights;         // which checkpoint was loaded
  std::string choice;       // which, and why: the line commands print on stderr
  Metadata metadata;        // its metadata (step, val_loss, ...)
  nlohmann::json files;     // config.json as a whole (an empty object for a lone weights file)
};

// A loaded model as its class M (the caller checked its kind), with its typed config.
template <class M, class Config>
LoadedAs<M, Config> loaded_as(LoadedModel&& m) {
  LoadedAs<M, Config> out;
  M* typed = dynamic_cast<M*>(m.model.get());
  if (!typed) throw Error(m.weights.string() + ": the table of kinds built no " + m.kind->name + " model");
  m.model.release();
  out.model.reset(typed);
  update_from_json(out.config, m.config, m.weights.string() + ": config");
  out.tokenizer = std::move(m.tokenizer);
  out.training = std::move(m.training);
  out.weights = std::move(m.weights);
  out.choice = std::move(m.choice);
  out.metadata = std::move(m.metadata);
  out.files = std::move(m.files);
  return out;
}

// load_model_dir for the kind `kind`, whose class is M: another kind is an Error naming the
// command that takes it.
template <class M, class Config>
LoadedAs<M, Config> load_model_dir_as(const fs::path& dir, const std::string& which, const std::string& kind) {
  return loaded_as<M, Config>(load_model_dir(dir, which, kind));
}

}  // namespace potop
