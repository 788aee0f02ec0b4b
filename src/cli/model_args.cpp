#include "cli/model_args.h"

#include <cstdio>

#include "core/threads.h"

namespace potop::cli {

void add_model_options(CLI::App* cmd, ModelArgs& a) {
  cmd->add_option("-m,--model", a.model, "model directory written by potop train, or one of its .safetensors files")
      ->required();
  cmd->add_option("--checkpoint", a.checkpoint,
                  "which weights: best, latest, resume, step-N or a .safetensors path (default: the newest that is "
                  "not worse than best)");
  cmd->add_option("-t,--threads", a.threads, "threads to use (0 = all cores)")->capture_default_str();
}

LoadedModel load_model(const ModelArgs& a) {
  apply_threads_flag(a.threads);
  return load_model_dir(a.model, a.checkpoint);
}

void announce(const LoadedModel& m) { std::fprintf(stderr, "checkpoint: %s\n", m.choice.c_str()); }

}  // namespace potop::cli
