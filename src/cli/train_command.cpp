#include "cli/train_command.h"

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/flags.h"
#include "core/error.h"
#include "core/stop_signals.h"
#include "dist/communicator.h"

namespace potop::cli {

void add_train_flags(CLI::App* cmd, TrainFlags& flags, const std::vector<Field>& fields) {
  RunControl& c = flags.control;
  cmd->add_option("--resume", c.resume,
                  "continue the run in this model directory (or from its step-<N>.safetensors); options not "
                  "given come from the checkpoint");
  cmd->add_flag("--allow-data-change", c.allow_data_change,
                "with --resume: continue on data that differs from the checkpoint's");
  cmd->add_flag("--force", c.force, "start a new run in an --out that holds a model, replacing it");
  cmd->add_flag("--json", flags.json, "print a summary of the run as one JSON object on stdout at the end");
  for (const Field& f : fields) add_field(cmd, f);
}

void collect_given(const CLI::App* cmd, TrainFlags& flags, const std::vector<Field>& fields) {
  for (const Field& f : fields)
    if (field_given(cmd, f)) flags.control.given.push_back(f.name);
}

int run_train_command(TrainFlags& flags, const std::string& out,
                      const std::function<RunResult(std::FILE* log, const RunControl& control)>& train) {
  RunControl& control = flags.control;
  stop_on_signal("\npotop: stopping: finishing this step (or dropping the evaluation under way) and saving a "
                 "checkpoint; again to quit at once\n");
  control.stop_requested = [](int) { return stop_signal_received() != 0; };
  // Under mpirun this process is one rank of the run (docs/distributed.md); MPI is started only
  // then, and ends when `comm` does.
  const std::unique_ptr<Communicator> comm = make_communicator();
  RanksOfRun ranks{comm.get()};
  if (comm->size() > 1) control.ranks = &ranks;
  // Rank 0 prints; the others log nowhere.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> quiet(comm->rank() == 0 ? nullptr : std::fopen("/dev/null", "w"),
                                                        std::fclose);
  RunResult r;
  try {
    r = train(quiet ? quiet.get() : stderr, control);
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
    // collective, so the whole run ends here (the last checkpoint stays loadable: every file is
    // written atomically).
    std::fflush(stdout);
    std::fprintf(stderr, "potop: error: rank %d of %d: %s; stopping every rank\n", comm->rank(), comm->size(),
                 e.what());
    comm->abort(1);
  }
  if (comm->rank() != 0 || !flags.json) return 0;
  auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  const nlohmann::json summary = {{"out", control.resume.empty() ? out : control.resume},
                                  {"steps_done", r.steps_done},
                                  {"interrupted", r.interrupted},
                                  {"final_train_loss", number(r.final_train_loss)},
                                  {"final_val_loss", number(r.final_val_loss)},
                                  {"best_val_loss", number(r.best_val_loss)},
                                  {"tokens_per_s", r.tokens_per_second},
                                  {"seconds", r.seconds},
                                  {"nonfinite_skipped", r.nonfinite_skipped}};
  std::printf("%s\n", summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  return 0;
}

}  // namespace potop::cli
