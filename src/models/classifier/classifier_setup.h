// What `potop classify train` decides before it builds the model: the body it starts from
// (--init-from a GPT or a BERT), the tokenizer, and the model's config; and the copy of that
// body's weights into the new classifier.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/model_dir.h"
#include "data/labelled_text.h"
#include "models/classifier/classifier.h"
#include "models/classifier/classifier_options.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// The body a classifier starts from (--init-from): a GPT's (causal) or a BERT's (bidirectional).
struct InitBody {
  LoadedModel model;
  TransformerConfig config;     // the body's fields of its config
  bool causal = false;
};
// Another kind is an Error naming it and what it is for.
InitBody load_init_body(const std::string& dir);

// The model of a new run: the body's shape from --init-from (shape flags given are refused, with
// --dropout its own) or the flags; the tokenizer's ids (and a BERT's [MASK] past them); [CLS]
// and [SEP] for a bidirectional body whose tokenizer has them; the pooling resolved; the classes.
ClassifierConfig classifier_config(const ClassifierOptions& o, const std::vector<std::string>& given,
                                   const InitBody* init, const Tokenizer& tokenizer, std::vector<std::string> labels);

// The tokenizer of a new run: --init-from's (a --tokenizer that differs is an Error), a
// --tokenizer directory, or a lowercased word tokenizer of the training texts (--min-count).
std::unique_ptr<Tokenizer> classifier_tokenizer(const ClassifierOptions& o, InitBody* init,
                                                const std::vector<LabelledExample>& train);

// Copies every body tensor of `init` into the classifier by name (the head keeps its init).
// Returns how many; a missing tensor or another shape is an Error naming `dir`.
int copy_body(Classifier& model, const InitBody& init, const std::string& dir);

}  // namespace potop
