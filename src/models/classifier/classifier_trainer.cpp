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
  // What the flags left open, sized by the data (saved resolved); a resumed run given --epochs
  // alone trains to that many.
  if ((!kit.resuming() || control.was_given("epochs")) && !control.was_given("steps")) {
    options.steps = int(std::clamp<long>(per_epoch * options.epochs / options.grad_accum, 1, 1L << 30));
    // The linear decay (to 0) then stretches to the new end, as Hugging Face's Trainer resumed
    // with more epochs does; keeping the run's schedule would train the new epochs at --min-lr.
    if (kit.resuming() && options.lr_decay_steps == 0)
      std::fprintf(log, "note: --epochs %d: %d steps; the learning rate's decay now ends there\n", options.epochs,
                   options.steps);
  }
  if (!kit.resuming()) {
    if (!control.was_given("eval-interval")) options.eval_interval = int(std::max<long>(1, per_epoch / options.grad_accum));
    if (!control.was_given("lr") && options.init_from.empty()) options.lr = kFromScratchLr;
  }
  validate(options);
  kit.start(options, {}, options.init_from);

  std::unique_ptr<Tokenizer> tokenizer =
      kit.resuming() ? kit.resumed_tokenizer() : classifier_tokenizer(options, init ? &*init : nullptr, train.examples);
  const uint64_t data_hash = fnv1a64(read_text_file(options.data));
  kit.check_data(data_hash, options.data, "examples");
  const ClassifierConfig config = kit.resuming() ? resumed_config(kit.state().config, options.model, control)
                                                : classifier_config(options, control.given, init ? &*init : nullptr,
                                                                    *tokenizer, labels);
  if (kit.resuming() && config.labels != labels)
    throw Error("--data " + options.data + ": its classes differ from the run's; a resumed run keeps its classes");
  kit.check_config(config, classifier_fields);
  train.encoded = encode_texts(config, *tokenizer, train.texts(), options.data);
  dev.encoded = encode_texts(config, *tokenizer, dev.texts(), options.dev);
  int longest = 1;  // the widest batch, training or evaluation, for the memory check
  for (const LabelledSet* s : {&train, &dev})
    for (const auto& r : s->encoded.rows) longest = std::max(longest, int(r.size()));
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
  // The training loss at each evaluation: the same examples every time (a fixed shuffle's first).
  std::vector<int> train_sample(train.examples.size()), dev_rows(dev.examples.size());
  std::iota(train_sample.begin(), train_sample.end(), 0);
  std::iota(dev_rows.begin(), dev_rows.end(), 0);
  Rng(hash64(options.seed, 2)).shuffle(train_sample);
  train_sample.resize(std::min(train_sample.size(), size_t(options.eval_iters) * B));
  ModelJob job;
  job.next_batch = [&](long index) { return batches.at(index); };
  job.evaluate = [&](int, const std::function<bool()>& stop) -> std::optional<Evaluation> {
    const std::optional<RowScores> t = score_rows(model, train.encoded.rows, train.classes, train_sample, B, stop);
    const std::optional<RowScores> d = t ? score_rows(model, dev.encoded.rows, dev.classes, dev_rows, B, stop) : t;
    if (!d) return std::nullopt;
    const ClassificationScores s = score_predictions(dev.classes, d->predicted, config.n_classes());
    Evaluation e{float(t->loss), float(d->loss)};
    e.extra.push_back({"dev_accuracy", 100.0 * s.accuracy});  // percent, as BLEU
    e.selection = float(1.0 - s.accuracy);                    // the best checkpoint: the best dev accuracy
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
