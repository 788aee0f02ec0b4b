// `potop bow`: the bigram + attention bag-of-words language model (model/bow.h, docs/bow.md).
//   potop bow train     --data FILE --out DIR --attention none|mean|idf|dot|additive ...
//   potop bow eval      --model DIR --data FILE      word-level loss and perplexity
//   potop bow attention --model DIR --text "..."     the weights each predicted word put on the
//                                                    earlier words: a table, and an HTML picture
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "models/bow/bow_model_dir.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/train_command.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/threads.h"
#include "data/dataset.h"
#include "data/text_file.h"
#include "report/attention_map.h"
#include "train/batch_parallel.h"
#include "models/bow/bow_trainer.h"
#include "train/evaluate.h"

namespace potop::cli {

namespace {

struct BowModelArgs {
  std::string model, checkpoint;
  int threads = 0;
};

void add_bow_model_options(CLI::App* cmd, BowModelArgs& a) {
  cmd->add_option("-m,--model", a.model, "model directory written by potop bow train, or one of its .safetensors")
      ->required();
  cmd->add_option("--checkpoint", a.checkpoint, "which weights: best, latest, resume, step-N or a .safetensors path");
  cmd->add_option("-t,--threads", a.threads, "threads to use (0 = all cores)")->capture_default_str();
}

LoadedBow load_bow(const BowModelArgs& a) {
  if (a.threads < 0) throw Error("--threads must be >= 0 (0 = all cores)");
  apply_threads_flag(a.threads);
  return load_bow_dir(a.model, a.checkpoint);
}

void add_bow_train(CLI::App* bow, std::function<int()>& run) {
  CLI::App* cmd = bow->add_subcommand("train", "train a bag-of-words LM on a text file (word tokens), or resume a run");
  auto options = std::make_shared<BowOptions>();
  auto flags = std::make_shared<TrainFlags>();
  add_train_flags(cmd, *flags, bow_option_fields(*options));
  run = [cmd, options, flags]() {
    collect_given(cmd, *flags, bow_option_fields(*options));
    return run_train_command(*flags, options->out, [&](std::FILE* log, const RunControl& control) {
      return train_bow(*options, log, control);
    });
  };
}

struct BowEvalArgs {
  BowModelArgs model;
  std::string data;
  int batch_size = 16, stride = 0;
  bool json = false;
};

void add_bow_eval(CLI::App* bow, std::function<int()>& run) {
  CLI::App* cmd = bow->add_subcommand("eval", "word-level loss and perplexity of a bag-of-words LM on a text file");
  auto a = std::make_shared<BowEvalArgs>();
  add_bow_model_options(cmd, a->model);
  cmd->add_option("--data", a->data, "UTF-8 text file to score")->required();
  cmd->add_option("--batch-size", a->batch_size, "windows per forward pass")->capture_default_str();
  cmd->add_option("--stride", a->stride, "window advance; 0 = the window (non-overlapping)")->capture_default_str();
  cmd->add_flag("--json", a->json, "print the result as one JSON object");
  run = [a]() {
    if (a->batch_size < 1) throw Error("--batch-size must be positive (got " + std::to_string(a->batch_size) + ")");
    LoadedBow m = load_bow(a->model);
    const std::string text = read_utf8_text(a->data);
    UnknownReport unknown;  // words outside the vocabulary are <unk>, as in training
    const std::vector<int> tokens = m.tokenizer->encode(text, a->data, Unknown::kReplace, &unknown);
    const int B = a->batch_size, T = m.config.block_size;
    const std::vector<EvalWindow> windows = eval_windows(tokens.size(), T, a->stride);
    if (windows.empty()) throw Error(a->data + ": needs at least 2 words to score");
    std::fprintf(stderr, "checkpoint: %s\n", m.choice.c_str());
    if (unknown.count > 0) std::fprintf(stderr, "note: %s: %s scored as <unk>\n", a->data.c_str(), unknown.describe().c_str());
    std::vector<int> x(size_t(B) * T), y(size_t(B) * T);
    BatchParallel parallel(*m.model, std::min(get_threads(), B));
    size_t first = 0;
    const LossTotal total = evaluate_loss(parallel, [&](Batch& batch) {
      if (first >= windows.size()) return false;
      fill_eval_batch(x.data(), y.data(), TokenView(tokens), windows, first, B, T);
      first += size_t(B);
      batch = Batch{{B, T}, x.data(), y.data()};
      return true;
    });
    const double loss = total.mean(), perplexity = std::exp(loss);
    if (a->json) {
      std::printf("%s\n", nlohmann::json{{"loss", loss},
                                         {"perplexity", perplexity},
                                         {"words", total.targets},
                                         {"unknown_words", unknown.count},
                                         {"attention", to_string(m.config.attention)}}
                              .dump()
                              .c_str());
    } else {
      std::printf("loss %.4f  perplexity %.2f  (%ld words scored, attention %s)\n", loss, perplexity, total.targets,
                  to_string(m.config.attention).c_str());
    }
    return 0;
  };
}

struct BowAttentionArgs {
  BowModelArgs model;
  std::string text, html;
};

// A word as a table cell: whitespace made visible, long words cut.
std::string cell(const Tokenizer& tokenizer, int id) {
  std::string s = tokenizer.decode_one(id);
  if (s == "\n") return "↵";
  if (!s.empty() && s.find_first_not_of(' ') == std::string::npos) return "␣";
  return s;
}

void add_bow_attention(CLI::App* bow, std::function<int()>& run) {
  CLI::App* cmd = bow->add_subcommand(
      "attention", "print, for each predicted word of a text, the weights it put on the earlier words");
  auto a = std::make_shared<BowAttentionArgs>();
  add_bow_model_options(cmd, a->model);
  cmd->add_option("--text", a->text, "text to look at, at most the model's window of words")->required();
  cmd->add_option("--html", a->html, "also write the weights as a heat map to this HTML file");
  run = [a]() {
    LoadedBow m = load_bow(a->model);
    const std::vector<int> ids = m.tokenizer->encode(a->text, "--text", Unknown::kReplace, nullptr);
    const int T = static_cast<int>(ids.size());
    if (T < 2 || T > m.config.block_size)
      throw Error("--text must hold 2 to " + std::to_string(m.config.block_size) + " words (the model's window), got " +
                  std::to_string(T));
    if (!m.config.has_bag())
      throw Error(m.weights.string() + ": attention none is the plain bigram: it has no weights on earlier words");
    std::vector<int> targets(ids.begin() + 1, ids.end());
    targets.push_back(-1);
    m.model->forward(Batch{{1, T}, ids.data(), targets.data()}, Pass{});
    const float* weights = m.model->attention_weights();
    const float* losses = m.model->losses();
    std::fprintf(stderr, "checkpoint: %s\n", m.choice.c_str());
    // One line per predicted word: the previous word, the word, its probability, then the
    // earlier words by weight.
    std::printf("attention %s; for each word: the previous word, p(word), and the weights on the earlier words\n",
                to_string(m.config.attention).c_str());
    for (int t = 1; t < T; ++t) {  // row 0 has no earlier word
      const int next = targets[size_t(t)];
      std::string line = "after «" + cell(*m.tokenizer, ids[size_t(t)]) + "»";
      if (next >= 0) {
        char p[64];
        std::snprintf(p, sizeof p, " → «%s» p=%.3f:", cell(*m.tokenizer, next).c_str(), std::exp(-losses[t]));
        line += p;
      } else {
        line += " (the next word):";
      }
      std::vector<int> order(static_cast<size_t>(t));
      for (int k = 0; k < t; ++k) order[size_t(k)] = k;
      const float* w = weights + size_t(t) * T;
      std::stable_sort(order.begin(), order.end(), [&](int i, int j) { return w[i] > w[j]; });
      for (int k : order) {
        char entry[32];
        std::snprintf(entry, sizeof entry, "%.3f", w[k]);
        line += std::string(" ") + cell(*m.tokenizer, ids[size_t(k)]) + "(" + std::to_string(k) + ")=" + entry;
      }
      std::printf("%s\n", line.c_str());
    }
    if (!a->html.empty()) {
      write_file_atomic(a->html, bow_attention_html(*m.tokenizer, ids, weights, to_string(m.config.attention)));
      std::printf("wrote %s\n", a->html.c_str());
    }
    return 0;
  };
}

}  // namespace

Run add_bow(CLI::App& app) {
  CLI::App* bow = app.add_subcommand("bow", "the bigram + attention bag-of-words language model (word level)");
  bow->require_subcommand(1);
  auto runs = std::make_shared<std::vector<std::pair<CLI::App*, std::function<int()>>>>();
  for (auto add : {add_bow_train, add_bow_eval, add_bow_attention}) {
    std::function<int()> run;
    add(bow, run);
    runs->emplace_back(bow->get_subcommands({}).back(), std::move(run));
  }
  return [runs]() {
    for (auto& [sub, run] : *runs)
      if (sub->parsed()) return run();
    return 1;
  };
}

}  // namespace potop::cli
