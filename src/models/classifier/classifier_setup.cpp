#include "models/classifier/classifier_setup.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tokenizer/train_tokenizer.h"

namespace potop {

InitBody load_init_body(const std::string& dir) {
  InitBody init{load_model_dir(dir), {}, false};
  refuse_quantized(init.model.metadata, "--init-from " + dir, "fine-tuning");
  if (!init.model.kind->lends_body)
    throw wrong_kind("--init-from " + dir, *init.model.kind, "a GPT or a BERT whose body a classifier can start from");
  // A BERT's config is the body's TransformerConfig fields (and maybe its own): read the body's alone.
  nlohmann::json body = nlohmann::json::object();
  const nlohmann::json all = to_json(TransformerConfig{});
  for (const auto& [key, value] : init.model.config.items())
    if (all.contains(key)) body[key] = value;
  update_from_json(init.config, body, "--init-from " + dir);
  init.config.mlm_transform = init.config.mask_in_vocab = false;  // a BERT's head, not its body
  init.causal = init.model.kind->can(Task::kCausalLM);
  return init;
}

ClassifierConfig classifier_config(const ClassifierOptions& o, const std::vector<std::string>& given,
                                   const InitBody* init, const Tokenizer& tokenizer, std::vector<std::string> labels) {
  ClassifierConfig c = o.model;
  if (c.body.mlm_transform || c.body.mask_in_vocab)
    throw Error(std::string("--") + (c.body.mlm_transform ? "mlm-transform" : "mask-in-vocab") +
                ": a BERT's masked-LM head; a classifier's head is classifier.weight");
  if (init) {
    TransformerConfig body = init->config, asked = o.model.body;
    const std::vector<Field> have = transformer_fields(body), want = transformer_fields(asked);
    for (size_t i = 0; i < have.size(); ++i) {
      if (std::find(given.begin(), given.end(), have[i].name) == given.end()) continue;
      if (have[i].shape)
        throw Error("--" + have[i].name + ": the body's shape comes from --init-from " + o.init_from + "; drop the flag");
      copy_value(want[i], have[i]);  // dropout
    }
    if (std::find(given.begin(), given.end(), "causal") != given.end() && o.model.causal != init->causal)
      throw Error("--causal: the body of --init-from " + o.init_from + " is " + (init->causal ? "causal" : "bidirectional"));
    c.body = body, c.causal = init->causal;
    c.extra_ids = body.vocab_size - tokenizer.size();  // a BERT's [MASK]
  } else {
    c.body.vocab_size = tokenizer.size();
  }
  // [CLS] text [SEP]: the tokenizer's <bos> and <eos> (BERT's vocab.txt: [CLS] 101, [SEP] 102; char has none)
  c.cls_sep = !c.causal && tokenizer.specials().bos >= 0 && tokenizer.specials().eos >= 0;
  if (c.pooling == Pooling::kAuto) c.pooling = c.cls_sep ? Pooling::kCls : c.causal ? Pooling::kLast : Pooling::kMean;
  if (c.pooling == Pooling::kCls && !c.cls_sep)
    throw Error("--pooling cls: the " + tokenizer.kind() + " tokenizer has no <bos> to serve as [CLS]; use --pooling mean");
  c.labels = std::move(labels);
  c.validate("model");
  return c;
}

std::unique_ptr<Tokenizer> classifier_tokenizer(const ClassifierOptions& o, InitBody* init,
                                                const std::vector<LabelledExample>& train) {
  std::unique_ptr<Tokenizer> given = o.tokenizer.empty() ? nullptr : load_tokenizer_dir(o.tokenizer);
  if (init) {
    if (given && given->hash() != init->model.tokenizer->hash())
      throw Error("--tokenizer " + o.tokenizer + ": differs from the tokenizer of --init-from " + o.init_from +
                  " (a " + given->kind() + " of " + std::to_string(given->size()) + " tokens vs a " +
                  init->model.tokenizer->kind() + " of " + std::to_string(init->model.tokenizer->size()) +
                  "); the body only knows its own; drop --tokenizer");
    return std::move(init->model.tokenizer);
  }
  if (given) return given;
  std::string text;
  for (const LabelledExample& e : train) text.append(e.text).push_back('\n');
  TokenizerTrainOptions t;
  t.kind = TokenizerKind::kWord, t.min_count = o.min_count, t.lowercase = true;
  return train_tokenizer(text, o.data, t);
}

// The body's tensors of --init-from, copied by name into the classifier (the head keeps its init).
int copy_body(Classifier& m, const InitBody& init, const std::string& dir) {
  const ParameterSet& from = init.model.model->parameters();
  int copied = 0;
  const std::vector<ParamId> head = m.head_parameters();
  const std::vector<TensorSpec>& specs = m.parameters().layout().specs();
  for (size_t i = 0; i < specs.size(); ++i) {
    if (std::find(head.begin(), head.end(), ParamId(i)) != head.end()) continue;
    const TensorSpec* src = from.layout().find(specs[i].name);
    if (!src || src->shape != specs[i].shape)
      throw Error("--init-from " + dir + ": has no tensor " + specs[i].name + " of the body's shape");
    std::copy_n(from.values().at(*src), specs[i].numel, m.parameters().values().at(specs[i]));
    ++copied;
  }
  return copied;
}

}  // namespace potop
