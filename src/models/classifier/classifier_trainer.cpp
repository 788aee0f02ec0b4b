#include "models/classifier/classifier_trainer.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "checkpoint/model_dir.h"
#include "core/error.h"
#include "core/hash.h"
#include "data/labelled_text.h"
#include "data/text_file.h"
#include "models/classifier/classifier.h"
#include "models/classifier/classifier_data.h"
#include "models/classifier/classifier_kind.h"
#include "tokenizer/train_tokenizer.h"
#include "train/run_kit.h"

namespace potop {

namespace {

struct LabelledSet {
  std::vector<LabelledExample> examples;
  std::vector<int> classes;
  EncodedTexts encoded;
  std::vector<std::string> texts() const {
    std::vector<std::string> t;
    for (const LabelledExample& e : examples) t.push_back(e.text);
    return t;
  }
};

// The body a classifier starts from (--init-from): a GPT's (causal) or a BERT's (bidirectional).
struct InitBody {
  LoadedModel model;
  GPTConfig config;
  bool causal = false;
};

InitBody load_init_body(const std::string& dir) {
  InitBody init{load_model_dir(dir), {}, false};
  const std::string& kind = init.model.kind->name;
  if (kind != "gpt" && kind != "bert")
    throw wrong_kind("--init-from " + dir, *init.model.kind, "a GPT or a BERT whose body a classifier can start from");
  // A BERT's config is the body's GPTConfig fields (and maybe its own): read the body's alone.
  nlohmann::json body = nlohmann::json::object();
  const nlohmann::json all = to_json(GPTConfig{});
  for (const auto& [key, value] : init.model.config.items())
    if (all.contains(key)) body[key] = value;
  update_from_json(init.config, body, "--init-from " + dir);
  init.causal = kind == "gpt";
  return init;
}

// The model of the run: the body's shape from --init-from (shape flags given with another value
// are refused) or the flags, the classes of the training data, the pooling resolved.
ClassifierConfig classifier_config(const ClassifierOptions& o, const std::vector<std::string>& given,
                                   const InitBody* init, const Tokenizer& tokenizer, std::vector<std::string> labels) {
  ClassifierConfig c = o.model;
  if (init) {
    GPTConfig body = init->config, asked = o.model.body;
    const std::vector<Field> have = gpt_fields(body), want = gpt_fields(asked);
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
  c.cls_sep = !c.causal && tokenizer.kind() != "char";  // char tokenizers have no <bos>/<eos>
  if (c.pooling == Pooling::kAuto) c.pooling = c.cls_sep ? Pooling::kCls : c.causal ? Pooling::kLast : Pooling::kMean;
  if (c.pooling == Pooling::kCls && !c.cls_sep)
    throw Error("--pooling cls: the " + tokenizer.kind() + " tokenizer has no <bos> to serve as [CLS]; use --pooling mean");
  c.labels = std::move(labels);
  c.validate("model");
  return c;
}

std::unique_ptr<Tokenizer> choose_tokenizer(const ClassifierOptions& o, const RunKit& kit, InitBody* init,
                                            const LabelledSet& train) {
  if (kit.resuming()) return kit.resumed_tokenizer();
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
  for (const LabelledExample& e : train.examples) text.append(e.text).push_back('\n');
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

}  // namespace

RunResult train_classifier(const ClassifierOptions& requested, std::FILE* log, const RunControl& control) {
  RunKit kit(control, kClassifierKind, "potop classify train", log);
  ClassifierOptions options = kit.resume(requested);
  if (kit.resuming() && (!requested.init_from.empty() || !requested.tokenizer.empty()))
    throw Error(std::string(requested.init_from.empty() ? "--tokenizer" : "--init-from") +
                " starts a new run; a resumed run keeps its model and tokenizer");
  validate(options);
  LabelledSet train, dev;
  train.examples = read_labelled_tsv(options.data);
  dev.examples = read_labelled_tsv(options.dev);
  std::optional<InitBody> init;
  if (!kit.resuming() && !options.init_from.empty()) init.emplace(load_init_body(options.init_from));
  const std::vector<std::string> labels = label_set(train.examples, options.data);
  train.classes = class_ids(train.examples, labels, options.data);
  dev.classes = class_ids(dev.examples, labels, options.dev);
  const int B = options.batch_size;
  const long per_epoch = (long(train.examples.size()) + B - 1) / B;
  if (!kit.resuming()) {  // what the flags left open, sized by the data (saved resolved)
    if (!control.was_given("steps")) options.steps = int(std::clamp<long>(per_epoch * options.epochs / options.grad_accum, 1, 1L << 30));
    if (!control.was_given("eval-interval")) options.eval_interval = int(std::max<long>(1, per_epoch / options.grad_accum));
    if (!control.was_given("lr") && options.init_from.empty()) options.lr = kFromScratchLr;
  }
  validate(options);
  kit.start(options);

  std::unique_ptr<Tokenizer> tokenizer = choose_tokenizer(options, kit, init ? &*init : nullptr, train);
  const uint64_t data_hash = fnv1a64(read_text_file(options.data));
  kit.check_data(data_hash, options.data, "examples");
  const ClassifierConfig config = kit.resuming()
      ? config_from_json<ClassifierConfig>(kit.state().config, "the saved config")
      : classifier_config(options, control.given, init ? &*init : nullptr, *tokenizer, labels);
  if (kit.resuming() && config.labels != labels)
    throw Error("--data " + options.data + ": its classes differ from the run's; a resumed run keeps its classes");
  kit.check_config(config, classifier_fields);
  train.encoded = encode_texts(config, *tokenizer, train.texts(), options.data);
  dev.encoded = encode_texts(config, *tokenizer, dev.texts(), options.dev);
  int longest = 1;
  for (const auto& r : train.encoded.rows) longest = std::max(longest, int(r.size()));
  Classifier& model = kit.build<Classifier>(config, {B, longest}, [&](Classifier& m) {
    m.init_weights(options.seed);
    if (init) std::fprintf(log, "init: %d body tensors from %s\n", copy_body(m, *init, options.init_from),
                           init->model.choice.c_str());
  });
  init.reset();
  if (config.freeze_encoder) {  // no update and no weight decay on the body
    const std::vector<ParamId> head = model.head_parameters();
    for (ParamId id = 0; id < ParamId(model.parameters().layout().specs().size()); ++id)
      if (std::find(head.begin(), head.end(), id) == head.end()) kit.optimizer().freeze(id);
  }
  kit.parallel().reserve({B, longest});
  std::fprintf(log, "data: %s: %zu examples, %d classes; %s: %zu examples; %s tokenizer, vocabulary %d\n",
               options.data.c_str(), train.examples.size(), config.n_classes(), options.dev.c_str(),
               dev.examples.size(), tokenizer->kind().c_str(), tokenizer->size());
  for (const LabelledSet* s : {&train, &dev}) {
    const std::string& file = s == &train ? options.data : options.dev;
    if (s->encoded.truncated)
      std::fprintf(log, "note: %s: %ld texts longer than the block (%d tokens) are cut to it\n", file.c_str(),
                   s->encoded.truncated, config.body.block_size);
    if (s->encoded.unknown.count)
      std::fprintf(log, "note: %s: %s replaced\n", file.c_str(), s->encoded.unknown.describe(4).c_str());
  }
  std::fprintf(log, "model: %s%s: %zu parameters; %ld batches per epoch, %d steps\n",
               classifier_kind().describe(to_json(config)).c_str(), config.freeze_encoder ? ", body frozen" : "",
               model.num_parameters(), per_epoch, options.steps);

  EpochBatches batches(train.encoded.rows, train.classes, B, hash64(options.seed, 1));
  // The training loss at each evaluation: the same examples every time (a fixed shuffle).
  EpochBatches train_sample(train.encoded.rows, train.classes, B, hash64(options.seed, 2));
  const long train_batches = std::min<long>(options.eval_iters, train_sample.per_epoch());
  RowBatch dev_batch;
  std::vector<int> dev_order(dev.examples.size());
  for (size_t i = 0; i < dev_order.size(); ++i) dev_order[i] = int(i);
  ModelJob job;
  job.next_batch = [&](long index) { return batches.at(index); };
  job.evaluate = [&](int, const std::function<bool()>& stop) -> std::optional<Evaluation> {
    double train_loss = 0, dev_loss = 0;
    long train_rows = 0;
    for (long k = 0; k < train_batches; ++k) {
      if (stop()) return std::nullopt;
      const Batch b = train_sample.at(k);
      train_loss += double(model.forward(b, Pass{})) * b.B, train_rows += b.B;
    }
    long correct = 0;
    const int K = config.n_classes();
    for (size_t first = 0; first < dev_order.size(); first += size_t(B)) {
      if (stop()) return std::nullopt;
      const int count = int(std::min(dev_order.size() - first, size_t(B)));
      const Batch b = dev_batch.fill(dev.encoded.rows, dev.classes.data(), dev_order.data() + first, count);
      dev_loss += double(model.forward(b, Pass{})) * count;
      const float* logits = model.logits();
      for (int i = 0; i < count; ++i)
        correct += std::max_element(logits + size_t(i) * K, logits + size_t(i + 1) * K) - (logits + size_t(i) * K) ==
                   b.labels[i];
    }
    const double accuracy = double(correct) / double(dev_order.size());
    Evaluation e{float(train_loss / std::max(1L, train_rows)), float(dev_loss / double(dev_order.size()))};
    e.extra.push_back({"dev_accuracy", 100.0 * accuracy});
    e.selection = float(1.0 - accuracy);  // the best checkpoint: the best dev accuracy
    return e;
  };
  job.tokens_per_batch = long(B) * longest;
  job.d_model = config.body.n_embd;
  job.patience = options.patience;
  job.batch_text = std::to_string(B) + " texts";
  job.sampler_state = [&] { return Rng(hash64(options.seed, 1)).state(); };  // unused: batches are indexed
  job.write_model_files = [&](const nlohmann::json& saved) {
    save_model_files(options.out, kClassifierKind, to_json(config), *tokenizer, saved);
  };
  return kit.run(job, *tokenizer, to_json(config), to_json(options), data_hash);
}

}  // namespace potop
