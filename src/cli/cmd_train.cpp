#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "core/stop_signals.h"
#include "core/error.h"
#include "core/file_io.h"
#include "dist/communicator.h"
#include "models/gpt/gpt_trainer.h"

namespace potop::cli {

Run add_train(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("train", "train a GPT on a text file (one token per character, or --tokenizer DIR), or resume a run");
  auto options = std::make_shared<TrainOptions>();
  auto config = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto control = std::make_shared<TrainControl>();
  cmd->add_option("--config", *config, "JSON file of options (keys like n_layer); flags override it")
      ->check(CLI::ExistingFile);
  cmd->add_option("--resume", control->resume,
                  "continue the run in this model directory (or from its step-<N>.safetensors); options not "
                  "given come from the checkpoint");
  cmd->add_flag("--allow-data-change", control->allow_data_change,
                "with --resume: continue on a text that differs from the checkpoint's");
  cmd->add_flag("--force", control->force, "start a new run in an --out that holds a model, replacing it");
  cmd->add_flag("--json", *json, "print a summary of the run as one JSON object on stdout at the end");
  for (const Field& f : option_fields(*options)) add_field(cmd, f);
  return [cmd, options, config, control, json]() {
    std::vector<std::string>& given = control->given;
    for (const Field& f : option_fields(*options))
      if (field_given(cmd, f)) given.push_back(f.name);
    if (control->allow_data_change && control->resume.empty())
      throw Error("--allow-data-change only applies with --resume");
    if (control->force && !control->resume.empty())
      throw Error("--force starts a new run; it does not go with --resume");
    if (!config->empty()) {
      for (const std::string& name : apply_config_file(*options, *config, given))
        if (std::find(given.begin(), given.end(), name) == given.end()) given.push_back(name);
    }
    install_training_stop_handlers();
    control->stop_requested = [](int) { return training_stop_requested(); };
    // Under mpirun this process is one rank of the run (docs/distributed.md); MPI is started
    // only then, and ends when `comm` does.
    const std::unique_ptr<Communicator> comm = make_communicator();
    RanksOfRun ranks{comm.get()};
    if (comm->size() > 1) control->ranks = &ranks;
    // Rank 0 prints; the others log nowhere.
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> quiet(comm->rank() == 0 ? nullptr : std::fopen("/dev/null", "w"),
                                                          std::fclose);
    TrainResult r;
    try {
      r = train(*options, quiet ? quiet.get() : stderr, *control);
    } catch (const std::exception& e) {
      if (comm->size() == 1) throw;
      if (!ranks.agreed) {  // this rank failed in setup: the others wait for it at the agreement
        ranks.agreed = ranks.refused = true;
        const std::string message = agree_on_setup(*comm, e.what(), nullptr);
        if (comm->rank() == 0) throw Error(message);
        return 1;
      }
      if (ranks.refused) {  // every rank refuses the run; rank 0 says why
        if (comm->rank() == 0) throw;
        return 1;
      }
      // A failure in the middle of the run: the other ranks may be waiting for this one in a
      // collective, so the whole run ends here (the last checkpoint stays loadable: every file
      // is written atomically).
      std::fflush(stdout);
      std::fprintf(stderr, "potop: error: rank %d of %d: %s; stopping every rank\n", comm->rank(), comm->size(),
                   e.what());
      comm->abort(1);
    }
    if (comm->rank() != 0) return 0;
    if (*json) {
      auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
      const nlohmann::json summary = {{"out", control->resume.empty() ? options->out : control->resume},
                                      {"steps_done", r.steps_done},
                                      {"interrupted", r.interrupted},
                                      {"final_train_loss", number(r.final_train_loss)},
                                      {"final_val_loss", number(r.final_val_loss)},
                                      {"best_val_loss", number(r.best_val_loss)},
                                      {"tokens_per_s", r.tokens_per_second},
                                      {"seconds", r.seconds},
                                      {"nonfinite_skipped", r.nonfinite_skipped}};
      std::printf("%s\n", summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    }
    return 0;
  };
}

}  // namespace potop::cli
