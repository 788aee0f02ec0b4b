// What the encoder-decoder's two trainers share — `potop translate train` (sentence pairs,
// translation_trainer.cpp) and `potop translate pretrain` (T5's span corruption on plain text,
// pretrain_trainer.cpp): the model built through the run kit (new weights, a base model's, or the
// resumed ones), its vocabulary with the sentinels, the log line, the mean loss of a set of
// batches, and the job's sizes and model files.
#pragma once
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include "models/encoder_decoder/encoder_decoder.h"
#include "models/encoder_decoder/translation_model.h"
#include "tokenizer/tokenizer.h"
#include "train/run_kit.h"

namespace potop {

// The --tokenizer directory of a new run: a SentencePiece one (bpe or unigram), whose pieces cover
// any text. Another kind is refused: a char tokenizer has no <pad>, <bos>, <eos> or <unk> (their
// ids are characters), and a word tokenizer would turn every unseen word into <unk> silently.
std::unique_ptr<Tokenizer> subword_tokenizer(const std::string& dir);

// The sentinels of the run's model: those saved with a resumed run's config, else `fresh`.
int sentinels_of_run(const RunKit& kit, int fresh);

// The config of the run: `shape` with the tokenizer's vocabulary and `sentinels` ids past it,
// validated, and on resume checked against the saved one.
EncoderDecoderConfig run_config(const RunKit& kit, EncoderDecoderConfig shape, const Tokenizer& tokenizer,
                                int sentinels);

// The model: a base model's weights (fine-tuning; base is then released), new ones drawn from
// `seed`, or on resume the saved ones. Batches up to `largest`.
EncoderDecoder& build_encoder_decoder(RunKit& kit, const EncoderDecoderConfig& config, const BatchShape& largest,
                                      uint64_t seed, std::unique_ptr<EncoderDecoder> base);

// "model: encoder-decoder, 3+3 layers, ...: N parameters"
void log_model(std::FILE* log, const EncoderDecoderConfig& config, const EncoderDecoder& model);

// The mean loss of n batches, batch i filled by fill(i, batch); nullopt when stop() says so.
std::optional<float> mean_batch_loss(BatchParallel& parallel, int n, const std::function<void(int, Batch&)>& fill,
                                     const std::function<bool()>& stop);

// The job's batches (index k -> fill(k)), sizes and model files; the caller adds its evaluation.
ModelJob encoder_decoder_job(const EncoderDecoderConfig& config, const std::function<void(long, Batch&)>& fill,
                             long tokens_per_batch, std::string batch_text, uint64_t seed,
                             std::function<void(const nlohmann::json&)> write_model_files);

}  // namespace potop
