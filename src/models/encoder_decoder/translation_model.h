// A translation model directory — what `potop translate train` writes and `potop translate`
// reads. Like a GPT's (model_dir.h), with kind "encoder-decoder" and the direction:
//   config.json  {"kind": "encoder-decoder", "model": {...EncoderDecoderConfig...},
//                 "tokenizer": "bpe", "source": "en", "target": "pl", "training": {...}}
//   tokenizer.model, latest/best/resume.safetensors, metrics.jsonl as for a GPT, and the split
//   the run made: train.tsv, dev.tsv, test.tsv (the data file's two columns, as they were).
#pragma once
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/model_dir.h"
#include "checkpoint/weights.h"
#include "models/encoder_decoder/encoder_decoder.h"
#include "models/encoder_decoder/encoder_decoder_kind.h"
#include "tokenizer/tokenizer.h"

namespace potop {

namespace fs = std::filesystem;

ModelHeader encoder_decoder_header(const EncoderDecoderConfig& config, const Tokenizer& tokenizer);

void save_translation_files(const fs::path& dir, const EncoderDecoderConfig& config, const Tokenizer& tokenizer,
                            const std::string& source, const std::string& target, const nlohmann::json& training);

struct TranslationModel : LoadedAs<EncoderDecoder, EncoderDecoderConfig> {
  std::string source, target;  // languages ("?" for a lone weights file, which does not say)
  // A T5 pre-trained model (translate pretrain's): text to its masked spans, no languages.
  bool pretrained_on_spans() const;
};

// The "languages" translate pretrain writes in config.json: plain text in, masked spans out.
inline constexpr const char* kSpanSource = "text";
inline constexpr const char* kSpanTarget = "spans";

// Whether the model's source language is the first column of a pairs file whose columns are
// `columns` ("en,pl"; empty: those of the data the model was trained on, its training "columns").
// Columns that are not the model's two languages are an Error naming `data`.
bool source_is_first_column(const TranslationModel& model, std::string columns, const std::string& data);
// An Error, naming `model` (the -m given) and what to do instead, when it was pre-trained on
// spans (T5's denoising) and so has no sentence pairs to score (potop eval, translate eval).
void require_sentence_pairs(const TranslationModel& m, const std::string& model);

// Loads a translation model directory (the checkpoint `which` names, as choose_checkpoint)
// through the one loader of every kind (checkpoint/model_dir.h). A GPT's directory, or anything
// else, is one clear potop::Error naming it.
TranslationModel load_translation_model(const fs::path& dir, const std::string& which = "");
// A model load_model_dir loaded, of kind encoder-decoder, as a TranslationModel.
TranslationModel as_translation_model(LoadedModel&& loaded);

}  // namespace potop
