#include "models/classifier/classifier_options.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace potop {

std::vector<Field> classifier_option_fields(ClassifierOptions& o) {
  std::vector<Field> fields{
      {"data", "training examples: a TSV file of label<TAB>text lines", &o.data},
      {"dev", "development examples (same format): evaluated every --eval-interval steps; the best dev accuracy "
              "picks best.safetensors and early stopping", &o.dev},
      {"init-from", "a GPT or BERT model directory: the classifier starts from its body (weights, shape and "
                    "tokenizer); without it the body is trained from scratch", &o.init_from},
      {"tokenizer", "from scratch: a tokenizer directory (default: a lowercased word tokenizer of the training texts "
                    "with --min-count); with --init-from it must be that model's", &o.tokenizer},
      {"min-count", "the word tokenizer of the texts: words seen fewer times become <unk>", &o.min_count},
      {"epochs", "passes over the training examples (sets --steps when --steps is not given)", &o.epochs},
      {"patience", "early stopping: stop after this many evaluations without a better dev accuracy (0 = never)",
       &o.patience},
  };
  for (Field& f : transformer_fields(o.model.body)) fields.push_back(std::move(f));
  for (Field& f : classifier_head_fields(o.model))  // cls-sep and extra-ids: decided by the body and its tokenizer
    if (f.name != "cls-sep" && f.name != "extra-ids") fields.push_back(std::move(f));
  for (Field& f : run_option_fields(o)) fields.push_back(std::move(f));
  return fields;
}

nlohmann::json to_json(const ClassifierOptions& options) {
  ClassifierOptions copy = options;
  return fields_to_json(classifier_option_fields(copy));
}

void validate(const ClassifierOptions& o) {
  require_option(!o.data.empty(), "data", "is required: a TSV file of label<TAB>text lines");
  require_option(!o.dev.empty(), "dev", "is required: a TSV file of label<TAB>text lines to evaluate on");
  require_option(o.min_count > 0, "min-count", "must be positive (got " + std::to_string(o.min_count) + ")");
  require_option(o.epochs > 0, "epochs", "must be positive (got " + std::to_string(o.epochs) + ")");
  require_option(o.patience >= 0, "patience", "must be >= 0 (got " + std::to_string(o.patience) + ")");
  require_option(std::isfinite(o.model.classifier_dropout) && o.model.classifier_dropout >= 0 &&
                     o.model.classifier_dropout < 1,
                 "classifier-dropout", "must be in [0, 1) (got " + option_number(o.model.classifier_dropout) + ")");
  require_option(!(o.model.pooling == Pooling::kCls && o.model.causal), "pooling",
                 "cls needs a bidirectional body (without --causal): in a causal one [CLS] sees only itself");
  validate(static_cast<const RunOptions&>(o));
}

}  // namespace potop
