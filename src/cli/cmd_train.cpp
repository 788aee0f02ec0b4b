#include <memory>

#include "cli/commands.h"
#include "train/trainer.h"

namespace potop::cli {

Run add_train(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("train", "train a character-level GPT on a text file");
  auto options = std::make_shared<TrainOptions>();
  auto config = std::make_shared<std::string>();
  cmd->add_option("--config", *config, "JSON file of options (keys like n_layer); flags override it")
      ->check(CLI::ExistingFile);
  for (const OptionField& f : option_fields(*options)) {
    std::visit(
        [&](auto* target) {
          using T = std::remove_pointer_t<decltype(target)>;
          if constexpr (std::is_same_v<T, bool>) cmd->add_flag("--" + f.name + ",!--no-" + f.name, *target, f.help);
          else cmd->add_option("--" + f.name, *target, f.help)->capture_default_str();
        },
        f.target);
  }
  return [cmd, options, config]() {
    if (!config->empty()) {
      std::vector<std::string> given;
      for (const OptionField& f : option_fields(*options))
        if (cmd->count("--" + f.name) > 0 || (std::holds_alternative<bool*>(f.target) && cmd->count("--no-" + f.name) > 0))
          given.push_back(f.name);
      apply_config_file(*options, *config, given);
    }
    train(*options);
    return 0;
  };
}

}  // namespace potop::cli
