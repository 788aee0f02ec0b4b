#include "models/encoder_decoder/translation_options.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace potop {

std::vector<Field> translation_fields(TranslationOptions& o) {
  std::vector<Field> fields = {
      {"data", "TSV file of sentence pairs, one pair a line: FIRST<tab>SECOND", &o.data, false},
      {"source", "language to translate from (one of --columns)", &o.source, false},
      {"target", "language to translate into (one of --columns)", &o.target, false},
      {"columns", "languages of the file's two columns, comma-separated", &o.columns, false},
      {"bad-lines", "a line without one tab or with an empty side: skip (counted, reported) or error",
       choice(o.bad_lines, {{BadLines::kSkip, "skip"}, {BadLines::kError, "error"}}), false},
      {"dev-fraction", "fraction of the pairs held out for evaluation during training (dev.tsv), at most "
                       "--dev-size of them", &o.dev_fraction, false},
      {"dev-size", "the most pairs held out for dev.tsv (given alone: exactly this many; 0: none, the evaluations "
                   "measure the training loss only)", &o.dev_size, false},
      {"test-fraction", "fraction of the pairs held out for the final test (test.tsv), at most --test-size of them",
       &o.test_fraction, false},
      {"test-size", "the most pairs held out for test.tsv (given alone: exactly this many; 0: none)", &o.test_size,
       false},
      {"vocab-size", "subword tokens of the shared source/target BPE tokenizer", &o.vocab_size, true},
      {"tokenizer", "a tokenizer directory (potop tokenizer train) instead of a BPE learned from the pairs",
       &o.tokenizer},
      {"init-from", "fine-tune: start from this encoder-decoder's weights, shape and tokenizer (such as potop "
                    "translate pretrain's), with a new optimizer and schedule", &o.init_from},
  };
  for (Field& f : encoder_decoder_fields(o.model)) fields.push_back(std::move(f));
  fields.push_back({"batch-tokens", "padded tokens per micro-batch (B x longest sentence), batches of similar lengths",
                    &o.batch_tokens, false});
  fields.push_back({"eval-sentences", "dev sentences translated (greedy) for BLEU and chrF at each evaluation",
                    &o.eval_sentences, false});
  for (Field& f : run_option_fields(o, {"batch-size", "eval-iters"})) fields.push_back(std::move(f));
  return fields;
}

nlohmann::json to_json(const TranslationOptions& options) {
  TranslationOptions copy = options;
  return fields_to_json(translation_fields(copy));
}

void validate(const TranslationOptions& o) {
  auto positive = [](int v, const char* flag) {
    if (v <= 0) throw Error(std::string("--") + flag + " must be positive (got " + std::to_string(v) + ")");
  };
  if (o.data.empty()) throw Error("--data is required: a TSV file of sentence pairs");
  validate(static_cast<const RunOptions&>(o));
  positive(o.batch_tokens, "batch-tokens"), positive(o.vocab_size, "vocab-size");
  if (o.eval_sentences < 0) throw Error("--eval-sentences must be >= 0");
  // 0 holds out none: no dev pairs (the run says so, and evaluates the training loss only), no test pairs.
  for (const auto& [flag, fraction] : {std::pair{"dev", o.dev_fraction}, std::pair{"test", o.test_fraction}})
    if (!(fraction >= 0 && fraction <= 1))
      throw Error(std::string("--") + flag + "-fraction " + option_number(fraction) +
                  ": must be between 0 and 1 (0: no " + flag + " pairs)");
  for (const auto& [flag, size] : {std::pair{"dev", o.dev_size}, std::pair{"test", o.test_size}})
    if (size < 0)
      throw Error(std::string("--") + flag + "-size " + std::to_string(size) + ": must be >= 0 (0: no " + flag +
                  " pairs)");
  if (o.batch_tokens < o.model.block_size)
    throw Error("--batch-tokens " + std::to_string(o.batch_tokens) + " is below --block-size " +
                std::to_string(o.model.block_size) + ": the longest pair would not fit in a batch");
  EncoderDecoderConfig shape = o.model;
  shape.vocab_size = std::max(shape.vocab_size, 1);  // comes from the tokenizer, later
  shape.validate("model");
}

}  // namespace potop
