#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "core/file_io.h"
#include "train/trainer.h"

namespace potop::cli {

namespace {

volatile sig_atomic_t g_stop_signal = 0;

// The first SIGINT or SIGTERM asks the trainer to finish its step, checkpoint and exit 0;
// SA_RESETHAND makes a second one end the process at once (the last checkpoint stays intact).
extern "C" void on_stop_signal(int signo) {
  g_stop_signal = signo;
  static const char msg[] = "\npotop: stopping after this step and saving a checkpoint (again to quit at once)\n";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
}

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace

Run add_train(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("train", "train a character-level GPT on a text file, or resume a run");
  auto options = std::make_shared<TrainOptions>();
  auto config = std::make_shared<std::string>();
  auto control = std::make_shared<TrainControl>();
  cmd->add_option("--config", *config, "JSON file of options (keys like n_layer); flags override it")
      ->check(CLI::ExistingFile);
  cmd->add_option("--resume", control->resume,
                  "continue the run in this model directory (or from its step-<N>.safetensors); options not "
                  "given come from the checkpoint");
  cmd->add_flag("--allow-data-change", control->allow_data_change,
                "with --resume: continue on a text that differs from the checkpoint's");
  for (const Field& f : option_fields(*options)) {
    const std::string flag = "--" + f.name;
    std::visit(
        [&](const auto& target) {
          using P = std::decay_t<decltype(target)>;
          if constexpr (std::is_same_v<P, Choice>) {
            // An unknown name is bad input (exit 1, naming the flag), like every other bad value.
            cmd->add_option_function<std::string>(
                   flag,
                   [target, flag](const std::string& value) {
                     if (!target.set(value)) throw Error(flag + ": " + target.mismatch(value));
                   },
                   f.help)
                ->default_str(target.get());
          } else if constexpr (std::is_same_v<P, bool*>) {
            cmd->add_flag(flag + ",!--no-" + f.name, *target, f.help);
          } else {
            cmd->add_option(flag, *target, f.help)->capture_default_str();
          }
        },
        f.target);
  }
  return [cmd, options, config, control]() {
    std::vector<std::string>& given = control->given;
    for (const Field& f : option_fields(*options))
      if (cmd->count("--" + f.name) > 0 || (std::holds_alternative<bool*>(f.target) && cmd->count("--no-" + f.name) > 0))
        given.push_back(f.name);
    if (control->allow_data_change && control->resume.empty())
      throw Error("--allow-data-change only applies with --resume");
    if (!config->empty()) {
      for (const std::string& name : apply_config_file(*options, *config, given))
        if (std::find(given.begin(), given.end(), name) == given.end()) given.push_back(name);
    }
    install_stop_handlers();
    control->stop_requested = [](int) { return g_stop_signal != 0; };
    train(*options, stderr, *control);
    return 0;
  };
}

}  // namespace potop::cli
