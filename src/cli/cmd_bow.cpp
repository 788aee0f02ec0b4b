// `potop bow`: the bigram + attention bag-of-words language model (model/bow.h, docs/bow.md).
//   potop bow train     --data FILE --out DIR --attention none|mean|idf|dot|additive ...
//   potop bow attention --model DIR --text "..."     the weights each predicted word put on the
//                                                    earlier words: a table, and an HTML picture
//                                                    (potop attention -m DIR -p "..." does the same)
// Its loss and perplexity on a text: potop eval, as for every model kind.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/bow_attention.h"
#include "cli/model_args.h"
#include "models/bow/bow_model_dir.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "core/stop_signals.h"
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

void add_bow_train(CLI::App* bow, std::function<int()>& run) {
  CLI::App* cmd = bow->add_subcommand("train", "train a bag-of-words LM on a text file (word tokens), or resume a run");
  auto options = std::make_shared<BowOptions>();
  auto control = std::make_shared<TrainControl>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--resume", control->resume, "continue the run in this model directory (options not given come "
                                               "from the checkpoint)");
  cmd->add_flag("--allow-data-change", control->allow_data_change,
                "with --resume: continue on a text that differs from the checkpoint's");
  cmd->add_flag("--force", control->force, "start a new run in an --out that holds a model, replacing it");
  cmd->add_flag("--json", *json, "print a summary of the run as one JSON object on stdout at the end");
  for (const Field& f : bow_option_fields(*options)) add_field(cmd, f);
  run = [cmd, options, control, json]() {
    for (const Field& f : bow_option_fields(*options))
      if (field_given(cmd, f)) control->given.push_back(f.name);
    if (control->allow_data_change && control->resume.empty())
      throw Error("--allow-data-change only applies with --resume");
    if (control->force && !control->resume.empty()) throw Error("--force starts a new run; it does not go with --resume");
    install_training_stop_handlers();
    control->stop_requested = [](int) { return training_stop_requested(); };
    const RunResult r = train_bow(*options, stderr, *control);
    if (*json) {
      auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
      std::printf("%s\n", nlohmann::json{{"out", control->resume.empty() ? options->out : control->resume},
                                         {"steps_done", r.steps_done},
                                         {"interrupted", r.interrupted},
                                         {"final_train_loss", number(r.final_train_loss)},
                                         {"final_val_loss", number(r.final_val_loss)},
                                         {"best_val_loss", number(r.best_val_loss)},
                                         {"words_per_s", r.tokens_per_second},
                                         {"seconds", r.seconds}}
                              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                              .c_str());
    }
    return 0;
  };
}

struct BowAttentionArgs {
  ModelArgs model;
  std::string text, html;
};

void add_bow_attention(CLI::App* bow, std::function<int()>& run) {
  CLI::App* cmd = bow->add_subcommand(
      "attention", "print, for each predicted word of a text, the weights it put on the earlier words");
  auto a = std::make_shared<BowAttentionArgs>();
  add_model_options(cmd, a->model);
  cmd->add_option("--text", a->text, "text to look at, at most the model's window of words")->required();
  cmd->add_option("--html", a->html, "also write the weights as a heat map to this HTML file");
  run = [a]() {
    LoadedBow m = load_model_with(a->model, load_bow_dir);
    return print_bow_attention(m, a->text, a->html);
  };
}

// `potop bow eval` of earlier versions: a pointer to the command that replaced it (hidden).
void add_bow_eval_moved(CLI::App* bow, std::function<int()>& run) {
  CLI::App* cmd = bow->add_subcommand("eval", "");
  cmd->group("");
  cmd->allow_extras();
  run = []() -> int {
    throw Error("potop bow eval is now potop eval, which scores a model of any kind: potop eval -m DIR --data FILE");
  };
}

}  // namespace

Run add_bow(CLI::App& app) {
  CLI::App* bow = app.add_subcommand("bow", "the bigram + attention bag-of-words language model (word level)");
  bow->require_subcommand(1);
  auto runs = std::make_shared<std::vector<std::pair<CLI::App*, std::function<int()>>>>();
  for (auto add : {add_bow_train, add_bow_attention, add_bow_eval_moved}) {
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
