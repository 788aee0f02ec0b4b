// `potop bert`: the BERT masked-LM encoder (models/bert/bert.h, docs/transfer.md).
//   potop bert pretrain --data TEXT_OR_PREPARED_DIR --tokenizer DIR --out DIR ...
//                                         masked-LM pre-training (every run-kit flag: resume,
//                                         --force, MPI, --threads)
//   potop bert fill -m DIR "Pan [MASK] rzekł"   the top-k fills of each [MASK]
// Its masked-LM loss and accuracy on a text: potop eval; its attention: potop attention; fine-tuning
// it on labelled text: potop classify train --init-from DIR.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_args.h"
#include "cli/train_command.h"
#include "core/error.h"
#include "models/bert/bert_kind.h"
#include "models/bert/bert_trainer.h"
#include "models/bert/fill_mask.h"

namespace potop::cli {

namespace {

void add_bert_pretrain(CLI::App* bert, std::function<int()>& run) {
  CLI::App* cmd = bert->add_subcommand("pretrain", "pre-train a BERT encoder as a masked LM on text, or resume a run");
  auto options = std::make_shared<BertOptions>();
  auto flags = std::make_shared<TrainFlags>();
  add_train_flags(cmd, *flags, bert_option_fields(*options));
  run = [cmd, options, flags]() {
    collect_given(cmd, *flags, bert_option_fields(*options));
    return run_train_command(*flags, options->out, [&](std::FILE* log, const RunControl& control) {
      return train_bert(*options, log, control);
    });
  };
}

struct FillArgs {
  ModelArgs model;
  std::string prompt;
  int top_k = 5;
  bool json = false;
};

void add_bert_fill(CLI::App* bert, std::function<int()>& run) {
  CLI::App* cmd = bert->add_subcommand("fill", "print the most likely tokens for each [MASK] of a text");
  auto a = std::make_shared<FillArgs>();
  add_model_options(cmd, a->model);
  cmd->add_option("prompt", a->prompt, "a text with [MASK] where a token is missing")->required();
  cmd->add_option("-k,--top-k", a->top_k, "fills to show per [MASK]")->capture_default_str();
  cmd->add_flag("--json", a->json, "print the fills as JSON (one list per [MASK], as Hugging Face's fill-mask)");
  run = [a]() {
    if (a->top_k < 1) throw Error("--top-k must be positive (got " + std::to_string(a->top_k) + ")");
    LoadedBert m = load_model_with(a->model, load_bert_dir);
    const auto fills = m.model->fill_mask(*m.tokenizer, a->prompt, a->top_k);
    announce(m);
    if (a->json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& mask : fills) {
        nlohmann::json list = nlohmann::json::array();
        for (const FillCandidate& c : mask)
          list.push_back({{"score", c.probability}, {"token", c.id}, {"token_str", c.token}, {"sequence", c.sequence}});
        out.push_back(list);
      }
      // A byte piece alone (<0xFC>) is not UTF-8: written as U+FFFD, as cmd_sample does.
      std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return 0;
    }
    for (size_t i = 0; i < fills.size(); ++i) {
      if (fills.size() > 1) std::printf("[MASK] %zu:\n", i + 1);
      for (const FillCandidate& c : fills[i])
        std::printf("%6.2f%%  %-16s %s\n", 100 * c.probability, c.piece.c_str(), c.sequence.c_str());
    }
    return 0;
  };
}

}  // namespace

Run add_bert(CLI::App& app) {
  CLI::App* bert = app.add_subcommand("bert", "the BERT masked-LM encoder: pre-training and filling in [MASK]");
  return subcommand_group(bert, {add_bert_pretrain, add_bert_fill});
}

}  // namespace potop::cli
