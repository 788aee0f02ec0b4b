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

struct BowAttentionArgs {
  ModelArgs model;
  std::string text, html;
  bool force = false;
};

void add_bow_attention(CLI::App* bow, std::function<int()>& run) {
  CLI::App* cmd = bow->add_subcommand(
      "attention", "print, for each predicted word of a text, the weights it put on the earlier words");
  auto a = std::make_shared<BowAttentionArgs>();
  add_model_options(cmd, a->model);
  cmd->add_option("--text", a->text, "text to look at, at most the model's window of words")->required();
  cmd->add_option("--html", a->html, "also write the weights as a heat map to this HTML file");
  add_output_force(cmd, a->force, "--html");
  run = [a]() {
    if (!a->html.empty()) check_output_file(a->html, "--html", a->force);
    LoadedBow m = load_model_with(a->model, load_bow_dir);
    return print_word_attention(*m.model, *m.tokenizer, m.weights.string(), m.choice, a->text, a->html);
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
  return subcommand_group(bow, {add_bow_train, add_bow_attention, add_bow_eval_moved});
}

}  // namespace potop::cli
