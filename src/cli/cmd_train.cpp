#include <algorithm>
#include <memory>

#include "cli/commands.h"
#include "cli/train_command.h"
#include "models/gpt/gpt_trainer.h"

namespace potop::cli {

Run add_train(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("train", "train a GPT on a text file (one token per character, or --tokenizer DIR), or resume a run");
  auto options = std::make_shared<GptOptions>();
  auto config = std::make_shared<std::string>();
  auto flags = std::make_shared<TrainFlags>();
  cmd->add_option("--config", *config, "JSON file of options (keys like n_layer); flags override it")
      ->check(CLI::ExistingFile);
  add_train_flags(cmd, *flags, gpt_option_fields(*options));
  return [cmd, options, config, flags]() {
    collect_given(cmd, *flags, gpt_option_fields(*options));
    std::vector<std::string>& given = flags->control.given;
    if (!config->empty()) {
      for (const std::string& name : apply_config_file(*options, *config, given))
        if (std::find(given.begin(), given.end(), name) == given.end()) given.push_back(name);
    }
    return run_train_command(*flags, options->out, [&](std::FILE* log, const RunControl& control) {
      return train_gpt(*options, log, control);
    });
  };
}

}  // namespace potop::cli
