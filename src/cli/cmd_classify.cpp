// `potop classify`: text classifiers (models/classifier/, docs/classify.md).
//   potop classify train     --data train.tsv --dev dev.tsv --out DIR [--init-from GPT_OR_BERT_DIR]
//   potop classify eval      -m DIR --data test.tsv [--json]   accuracy, macro-F1, per class, confusion
//   potop classify predict   -m DIR [--input FILE] [--json]    a label and its probability per line
//   potop classify attention -m DIR "text" [--html FILE]       what the pooled position attends to
// A model directory's checkpoint is chosen as for every command: latest.safetensors when it is
// newer and its dev accuracy no worse than best.safetensors's, else best (--checkpoint to say).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_args.h"
#include "cli/train_command.h"
#include "core/error.h"
#include "core/file_io.h"
#include "data/labelled_text.h"
#include "data/text_file.h"
#include "models/classifier/classifier_data.h"
#include "models/classifier/classifier_kind.h"
#include "models/classifier/classifier_trainer.h"
#include "report/attention_map.h"
#include "tokenizer/utf8.h"

namespace potop::cli {

namespace {

void add_classify_train(CLI::App* parent, std::function<int()>& run) {
  CLI::App* cmd = parent->add_subcommand(
      "train", "train a text classifier on label<TAB>text lines, from a GPT's or BERT's body or from scratch");
  auto options = std::make_shared<ClassifierOptions>();
  auto flags = std::make_shared<TrainFlags>();
  add_train_flags(cmd, *flags, classifier_option_fields(*options));
  run = [cmd, options, flags]() {
    collect_given(cmd, *flags, classifier_option_fields(*options));
    return run_train_command(*flags, options->out, [&](std::FILE* log, const RunControl& control) {
      return train_classifier(*options, log, control);
    });
  };
}

LoadedClassifier load_classifier(const ModelArgs& a) {
  apply_model_threads(a);
  // As every command: the newest weights unless best.safetensors has a better dev accuracy.
  return load_classifier_dir(a.model, a.checkpoint);
}

// Class probabilities (n, K) of texts.
std::vector<float> probabilities(LoadedClassifier& m, const EncodedTexts& texts) {
  return class_probabilities(*m.model, texts.rows);
}

int argmax(const float* p, int K) { return int(std::max_element(p, p + K) - p); }

struct ClassifyEvalArgs {
  ModelArgs model;
  std::string data;
  bool json = false;
};

int classify_eval(const ClassifyEvalArgs& a) {
  LoadedClassifier m = load_classifier(a.model);
  const std::vector<LabelledExample> examples = read_labelled_tsv(a.data);
  const std::vector<int> truth = class_ids(examples, m.config.labels, a.data);
  std::vector<std::string> texts;
  for (const LabelledExample& e : examples) texts.push_back(e.text);
  const EncodedTexts encoded = encode_texts(m.config, *m.tokenizer, texts, a.data);
  announce(m);
  const int K = m.config.n_classes();
  const std::vector<float> p = probabilities(m, encoded);
  std::vector<int> predicted;
  double loss = 0;
  for (size_t i = 0; i < truth.size(); ++i) {
    predicted.push_back(argmax(p.data() + i * K, K));
    loss -= std::log(std::max(p[i * K + size_t(truth[i])], 1e-30f));
  }
  loss /= double(truth.size());
  const ClassificationScores s = score_predictions(truth, predicted, K);
  if (a.json) {
    nlohmann::json classes = nlohmann::json::array();
    for (int k = 0; k < K; ++k)
      classes.push_back({{"label", m.config.labels[size_t(k)]}, {"precision", s.precision[size_t(k)]},
                         {"recall", s.recall[size_t(k)]}, {"f1", s.f1[size_t(k)]}, {"support", s.support[size_t(k)]}});
    std::printf("%s\n", nlohmann::json({{"kind", kClassifierKind}, {"examples", s.examples}, {"accuracy", s.accuracy},
                                        {"macro_f1", s.macro_f1}, {"loss", loss}, {"classes", classes},
                                        {"labels", m.config.labels}, {"confusion", s.confusion},
                                        {"truncated", encoded.truncated}, {"checkpoint", m.weights.string()}})
                            .dump()
                            .c_str());
    return 0;
  }
  std::printf("%s (%s): %ld examples%s\naccuracy %.4f | macro-F1 %.4f | loss %.4f\n", a.data.c_str(),
              m.weights.string().c_str(), s.examples,
              encoded.truncated ? (", " + std::to_string(encoded.truncated) + " cut to the block size").c_str() : "",
              s.accuracy, s.macro_f1, loss);
  size_t w = 5;
  for (const std::string& l : m.config.labels) w = std::max(w, l.size());
  std::printf("%-*s  precision  recall      f1  support\n", int(w), "class");
  for (int k = 0; k < K; ++k)
    std::printf("%-*s  %9.4f  %6.4f  %6.4f  %7ld\n", int(w), m.config.labels[size_t(k)].c_str(), s.precision[size_t(k)],
                s.recall[size_t(k)], s.f1[size_t(k)], s.support[size_t(k)]);
  std::printf("confusion matrix (rows: true class, columns: predicted)\n%-*s", int(w), "");
  for (const std::string& l : m.config.labels) std::printf(" %*s", int(std::max<size_t>(l.size(), 6)), l.c_str());
  std::printf("\n");
  for (int k = 0; k < K; ++k) {
    std::printf("%-*s", int(w), m.config.labels[size_t(k)].c_str());
    for (int j = 0; j < K; ++j)
      std::printf(" %*ld", int(std::max<size_t>(m.config.labels[size_t(j)].size(), 6)), s.confusion[size_t(k)][size_t(j)]);
    std::printf("\n");
  }
  return 0;
}

struct PredictArgs {
  ModelArgs model;
  std::string input;
  bool json = false;
};

// The texts to label, one a line: every line is checked before anything is printed.
std::vector<std::string> read_texts(const std::string& input) {
  std::string bytes;
  const std::string what = input.empty() ? "stdin" : input;
  if (input.empty()) {
    std::ostringstream s;
    s << std::cin.rdbuf();
    bytes = s.str();
  } else {
    bytes = read_text_file(input);
  }
  if (bytes.rfind("\xEF\xBB\xBF", 0) == 0) bytes.erase(0, 3);
  std::vector<std::string> texts;
  size_t begin = 0;
  for (long line = 1; begin < bytes.size(); ++line) {
    size_t end = bytes.find('\n', begin);
    if (end == std::string::npos) end = bytes.size();
    std::string text = bytes.substr(begin, end - begin);
    begin = end + 1;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    const std::string where = what + ":" + std::to_string(line);
    if (!utf8_valid(text)) utf8_decode(text, where);  // throws, naming the byte
    if (text.find_first_not_of(" \t") == std::string::npos) throw Error(where + ": empty text (one text a line)");
    texts.push_back(std::move(text));
  }
  if (texts.empty()) throw Error(what + ": no text to label (one text a line)");
  return texts;
}

int classify_predict(const PredictArgs& a) {
  LoadedClassifier m = load_classifier(a.model);
  const std::vector<std::string> texts = read_texts(a.input);
  const EncodedTexts encoded = encode_texts(m.config, *m.tokenizer, texts, a.input.empty() ? "stdin" : a.input);
  announce(m);
  const int K = m.config.n_classes();
  const std::vector<float> p = probabilities(m, encoded);
  for (size_t i = 0; i < texts.size(); ++i) {
    const float* row = p.data() + i * K;
    const int best = argmax(row, K);
    if (a.json) {
      nlohmann::json probs = nlohmann::json::object();
      for (int k = 0; k < K; ++k) probs[m.config.labels[size_t(k)]] = row[k];
      std::printf("%s\n", nlohmann::json({{"label", m.config.labels[size_t(best)]}, {"probability", row[best]},
                                          {"probabilities", probs}}).dump().c_str());
    } else {
      std::printf("%s\t%.4f\n", m.config.labels[size_t(best)].c_str(), row[best]);
    }
  }
  return 0;
}

struct ClassifyAttentionArgs {
  ModelArgs model;
  std::string text, html;
  bool force = false;
};

int classify_attention(const ClassifyAttentionArgs& a) {
  if (!a.html.empty()) check_output_file(a.html, "--html", a.force);
  LoadedClassifier m = load_classifier(a.model);
  const ClassifierConfig& c = m.config;
  const AttentionRow pictures = m.model->attention_row(*m.tokenizer, a.text, "the text");
  const std::vector<int>& row = pictures.ids;
  EncodedTexts encoded;
  encoded.rows = {row};
  const int T = int(row.size()), H = c.body.n_head, K = c.n_classes();
  announce(m);
  const std::vector<float> p = probabilities(m, encoded);  // the forward pass the maps are of
  // Which query row is read: [CLS] (position 0), the last token, or for mean pooling every row's mean.
  const std::string who = c.pooling == Pooling::kCls ? "[CLS]" : c.pooling == Pooling::kLast ? "the last token" : "the mean of all positions";
  std::vector<std::string> tokens;
  for (int t = 0; t < T; ++t) tokens.push_back(classifier_token_text(c, *m.tokenizer, row[size_t(t)]));
  const int best = argmax(p.data(), K);
  std::printf("predicted: %s (p=%.4f)%s\nwhat %s attends to, per layer and head:\n", c.labels[size_t(best)].c_str(),
              p[size_t(best)], pictures.truncated ? " (the text was cut to the block size)" : "", who.c_str());
  for (int l = 0; l < c.body.n_layer; ++l) {
    const float* att = m.model->attention(l);  // (1, H, T, T)
    for (int h = 0; h < H; ++h) {
      std::vector<float> w(size_t(T), 0.0f);
      const float* map = att + size_t(h) * T * T;
      if (c.pooling == Pooling::kMean) {
        for (int q = 0; q < T; ++q)
          for (int k = 0; k < T; ++k) w[size_t(k)] += map[size_t(q) * T + k] / float(T);
      } else {
        const int q = c.pooling == Pooling::kCls ? 0 : T - 1;
        std::copy_n(map + size_t(q) * T, T, w.begin());
      }
      std::printf("layer %d head %d:", l, h);
      std::vector<int> order(static_cast<size_t>(T));
      for (int t = 0; t < T; ++t) order[size_t(t)] = t;
      std::stable_sort(order.begin(), order.end(), [&](int i, int j) { return w[size_t(i)] > w[size_t(j)]; });
      for (size_t i = 0; i < order.size() && i < 5; ++i) {
        const int t = order[i];
        std::printf("  %s(%d) %s %.2f", tokens[size_t(t)].c_str(), t,
                    std::string(size_t(std::lround(w[size_t(t)] * 10)), '#').c_str(), w[size_t(t)]);
      }
      std::printf("\n");
    }
  }
  if (!a.html.empty()) {  // every map, as potop attention draws them: the pooled row among the others
    write_file_atomic(a.html, attention_html(self_attention_maps(*m.model, *m.tokenizer), row));
    std::printf("wrote %s\n", a.html.c_str());
  }
  return 0;
}

void add_classify_eval(CLI::App* parent, std::function<int()>& run) {
  CLI::App* cmd = parent->add_subcommand("eval", "accuracy, macro-F1, per-class precision/recall/F1 and the confusion "
                                                 "matrix of a classifier on label<TAB>text lines");
  auto a = std::make_shared<ClassifyEvalArgs>();
  add_model_options(cmd, a->model);
  cmd->add_option("--data", a->data, "label<TAB>text lines to score")->required();
  cmd->add_flag("--json", a->json, "print the result as one JSON object");
  run = [a]() { return classify_eval(*a); };
}

void add_classify_predict(CLI::App* parent, std::function<int()>& run) {
  CLI::App* cmd = parent->add_subcommand("predict", "label texts, one a line (stdin, or --input): label<TAB>probability");
  auto a = std::make_shared<PredictArgs>();
  add_model_options(cmd, a->model);
  cmd->add_option("--input", a->input, "a file of texts, one a line (default: stdin)");
  cmd->add_flag("--json", a->json, "one JSON object a line, with every class's probability");
  run = [a]() { return classify_predict(*a); };
}

void add_classify_attention(CLI::App* parent, std::function<int()>& run) {
  CLI::App* cmd = parent->add_subcommand(
      "attention", "what the pooled position ([CLS], or the last token) attends to, per layer and head, for a text");
  auto a = std::make_shared<ClassifyAttentionArgs>();
  add_model_options(cmd, a->model);
  cmd->add_option("text", a->text, "the text to look at")->required();
  cmd->add_option("--html", a->html, "also write every layer's and head's attention map to this HTML file (as potop attention)");
  add_output_force(cmd, a->force, "--html");
  run = [a]() { return classify_attention(*a); };
}

}  // namespace

Run add_classify(CLI::App& app) {
  CLI::App* classify = app.add_subcommand("classify", "text classifiers: fine-tune a GPT or BERT body, or train from scratch");
  return subcommand_group(classify,
                          {add_classify_train, add_classify_eval, add_classify_predict, add_classify_attention});
}

}  // namespace potop::cli
