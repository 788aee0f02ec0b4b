#include "models/classifier/classifier_trainer.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "checkpoint/model_dir.h"
#include "core/error.h"
#include "core/hash.h"
#include "data/labelled_text.h"
#include "data/text_file.h"
#include "models/classifier/classifier.h"
#include "models/classifier/classifier_data.h"
#include "models/classifier/classifier_kind.h"
#include "models/classifier/classifier_setup.h"
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

// A resumed run's model: the saved one, with the fields that are not its shape (dropout,
// --classifier-dropout, --freeze-encoder) as given now.
ClassifierConfig resumed_config(const nlohmann::json& saved, ClassifierConfig asked, const RunControl& control) {
  ClassifierConfig config = config_from_json<ClassifierConfig>(saved, "the saved config");
  const std::vector<Field> have = classifier_fields(config), want = classifier_fields(asked);
  for (size_t i = 0; i < have.size(); ++i)
    if (!have[i].shape && control.was_given(have[i].name)) copy_value(want[i], have[i]);
  return config;
}

// What the flags left open, sized by the data (saved resolved): the steps of --epochs (a resumed
// run given --epochs alone trains to that many), and on a new run an evaluation per epoch and the
// learning rate of a model trained from scratch.
void size_by_data(ClassifierOptions& options, const RunKit& kit, long per_epoch) {
  const RunControl& control = kit.control();
  if ((!kit.resuming() || control.was_given("epochs")) && !control.was_given("steps")) {
    options.steps = int(std::clamp<long>(per_epoch * options.epochs / options.grad_accum, 1, 1L << 30));
    // The linear decay (to 0) then stretches to the new end, as Hugging Face's Trainer resumed
    // with more epochs does; keeping the run's schedule would train the new epochs at --min-lr.
    if (kit.resuming() && options.lr_decay_steps == 0)
      std::fprintf(kit.log(), "note: --epochs %d: %d steps; the learning rate's decay now ends there\n",
                   options.epochs, options.steps);
  }
  if (!kit.resuming()) {
    if (!control.was_given("eval-interval")) options.eval_interval = int(std::max<long>(1, per_epoch / options.grad_accum));
    if (!control.was_given("lr") && options.init_from.empty()) options.lr = kFromScratchLr;
  }
}

// The model's config: on resume the saved one, whose classes the data must have; else from the
// flags, the tokenizer, the classes and the body --init-from starts from.
ClassifierConfig model_config(const RunKit& kit, const ClassifierOptions& options, const InitBody* init,
                              const Tokenizer& tokenizer, const std::vector<std::string>& labels) {
  const ClassifierConfig config = kit.resuming()
                                      ? resumed_config(kit.state().config, options.model, kit.control())
                                      : classifier_config(options, kit.control().given, init, tokenizer, labels);
  if (kit.resuming() && config.labels != labels)
    throw Error("--data " + options.data + ": its classes differ from the run's; a resumed run keeps its classes");
  kit.check_config(config, classifier_fields);
  return config;
}

// The token rows of both sets; returns the longest, training or evaluation (the memory check's).
int encode_sets(const ClassifierConfig& config, const Tokenizer& tokenizer, const ClassifierOptions& options,
                LabelledSet& train, LabelledSet& dev) {
  train.encoded = encode_texts(config, tokenizer, train.texts(), options.data);
  dev.encoded = encode_texts(config, tokenizer, dev.texts(), options.dev);
  int longest = 1;
  for (const LabelledSet* s : {&train, &dev})
    for (const auto& r : s->encoded.rows) longest = std::max(longest, int(r.size()));
  return longest;
}

// The model, initialised (with the body of --init-from, which is then let go) or resumed; with
// --freeze-encoder, no update and no weight decay on its body.
Classifier& build_model(RunKit& kit, const ClassifierConfig& config, const ClassifierOptions& options, int longest,
                        std::optional<InitBody>& init) {
  const int B = options.batch_size;
  Classifier& model = kit.build<Classifier>(config, {B, longest}, [&](Classifier& m) {
    m.init_weights(options.seed);
    if (init) std::fprintf(kit.log(), "init: %d body tensors from %s\n", copy_body(m, *init, options.init_from),
                           init->model.choice.c_str());
  });
  init.reset();
  if (config.freeze_encoder) {
    const std::vector<ParamId> head = model.head_parameters();
    for (ParamId id = 0; id < ParamId(model.parameters().layout().specs().size()); ++id)
      if (std::find(head.begin(), head.end(), id) == head.end()) kit.optimizer().freeze(id);
  }
  kit.parallel().reserve({B, longest});
  return model;
}

// The start-up lines of the data (texts cut to the block, words the vocabulary lacks) and the model.
void print_start(std::FILE* log, const ClassifierOptions& options, const LabelledSet& train, const LabelledSet& dev,
                 const ClassifierConfig& config, const Tokenizer& tokenizer, size_t parameters, long per_epoch) {
  std::fprintf(log, "data: %s: %zu examples, %d classes; %s: %zu examples; %s tokenizer, vocabulary %d\n",
               options.data.c_str(), train.examples.size(), config.n_classes(), options.dev.c_str(),
               dev.examples.size(), tokenizer.kind().c_str(), tokenizer.size());
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
               parameters, per_epoch, options.steps);
}

// The evaluation: the mean loss on the same training examples every time (a fixed shuffle's
// first eval_iters batches) and on the dev set, and the dev accuracy, which picks the best
// checkpoint.
class DevEvaluation {
 public:
  DevEvaluation(Classifier& model, const LabelledSet& train, const LabelledSet& dev, const ClassifierOptions& options)
      : model_(model), train_(train), dev_(dev), B_(options.batch_size), train_rows_(train.examples.size()),
        dev_rows_(dev.examples.size()) {
    std::iota(train_rows_.begin(), train_rows_.end(), 0);
    std::iota(dev_rows_.begin(), dev_rows_.end(), 0);
    Rng(hash64(options.seed, 2)).shuffle(train_rows_);
    train_rows_.resize(std::min(train_rows_.size(), size_t(options.eval_iters) * B_));
  }

  std::optional<Evaluation> operator()(const std::function<bool()>& stop) const {
    const std::optional<RowScores> t = score_rows(model_, train_.encoded.rows, train_.classes, train_rows_, B_, stop);
    const std::optional<RowScores> d = t ? score_rows(model_, dev_.encoded.rows, dev_.classes, dev_rows_, B_, stop) : t;
    if (!d) return std::nullopt;
    const ClassificationScores s = score_predictions(dev_.classes, d->predicted, model_.config().n_classes());
    Evaluation e{float(t->loss), float(d->loss)};
    e.extra.push_back({"dev_accuracy", 100.0 * s.accuracy});  // percent, as BLEU
    e.selection = float(1.0 - s.accuracy);                    // the best checkpoint: the best dev accuracy
    return e;
  }

 private:
  Classifier& model_;
  const LabelledSet &train_, &dev_;
  int B_;
  std::vector<int> train_rows_, dev_rows_;
};

}  // namespace

RunResult train_classifier(const ClassifierOptions& requested, std::FILE* log, const RunControl& control) {
  RunKit kit(control, kClassifierKind, "potop classify train", log);
  ClassifierOptions options = kit.resume(requested);
  kit.refuse_on_resume({{"--init-from", !requested.init_from.empty()}, {"--tokenizer", !requested.tokenizer.empty()}},
                       "model and tokenizer");
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
  size_by_data(options, kit, per_epoch);
  validate(options);
  kit.start(options, {}, options.init_from);

  std::unique_ptr<Tokenizer> tokenizer =
      kit.resuming() ? kit.resumed_tokenizer() : classifier_tokenizer(options, init ? &*init : nullptr, train.examples);
  const uint64_t data_hash = fnv1a64(read_text_file(options.data));
  kit.check_data(data_hash, options.data, "examples");
  const ClassifierConfig config = model_config(kit, options, init ? &*init : nullptr, *tokenizer, labels);
  const int longest = encode_sets(config, *tokenizer, options, train, dev);
  Classifier& model = build_model(kit, config, options, longest, init);
  print_start(log, options, train, dev, config, *tokenizer, model.num_parameters(), per_epoch);

  EpochBatches batches(train.encoded.rows, train.classes, B, hash64(options.seed, 1));
  const DevEvaluation evaluation(model, train, dev, options);
  ModelJob job;
  job.next_batch = [&](long index) { return batches.at(index); };
  job.evaluate = [&](int, const std::function<bool()>& stop) { return evaluation(stop); };
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
