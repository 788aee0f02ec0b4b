// A model directory is everything needed to use a trained model:
//   config.json         {"model": {...GPTConfig...}, "training": {...options used...}}
//   vocab.json          the tokenizer's characters in id order
//   latest.safetensors  weights after the most recent evaluation (or the end of training)
//   best.safetensors    weights with the lowest validation loss so far
//   resume.safetensors  the training state: weights, AdamW moments, step, RNG (train/train_state.h)
//   step-<N>.safetensors  the same at every N steps, with `potop train --keep N`
//   metrics.jsonl       training metrics, one JSON object per line
// Every file is written atomically, so a crash never leaves a half-written one behind.
#pragma once
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/safetensors.h"
#include "model/gpt.h"
#include "tokenizer/char_tokenizer.h"

namespace potop {

namespace fs = std::filesystem;

// Writes config.json and vocab.json.
void save_model_files(const fs::path& dir, const GPTConfig& config, const CharTokenizer& tokenizer,
                      const nlohmann::json& training);

// Writes <dir>/<name>.safetensors: the model's parameters in layout order, with `metadata`
// (e.g. step and validation loss) and the config and vocabulary hash for consistency checks.
void save_weights(const fs::path& path, const GPT& model, const CharTokenizer& tokenizer, Metadata metadata = {});

// Copies every parameter from a safetensors file into the model, checking that the file holds
// exactly the model's tensors with the model's shapes (errors name the file and tensor). A
// training state (potop.kind "train_state") may hold AdamW moments too, under "adamw.".
void load_weights(const fs::path& path, GPT& model);
void load_weights(const SafetensorsFile& file, GPT& model);

struct LoadedModel {
  GPTConfig config;
  std::unique_ptr<GPT> model;
  CharTokenizer tokenizer;
  nlohmann::json training;  // options the model was trained with, from config.json
  fs::path weights;         // which checkpoint was loaded
  Metadata metadata;        // its metadata (step, val_loss, ...)
};

// Loads config.json, vocab.json and a checkpoint: `which` is "best", "latest" or a path to a
// .safetensors file; empty means best if present, else latest. Every problem (missing
// directory or file, bad JSON, a config that does not match the tensors, a vocabulary that
// does not match the checkpoint) is a potop::Error naming the file.
LoadedModel load_model_dir(const fs::path& dir, const std::string& which = "");

}  // namespace potop
