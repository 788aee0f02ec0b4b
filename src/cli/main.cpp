// potop: train, sample from and evaluate character-level GPT models on a CPU.
#include <cstdio>
#include <map>

#include "cli/commands.h"
#include "core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"potop: train, inspect and sample Transformer language models on a CPU"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "potop 0.1.0");
  std::map<CLI::App*, potop::cli::Run> runs;
  for (auto add : {potop::cli::add_train, potop::cli::add_sample, potop::cli::add_eval}) {
    auto run = add(app);
    runs[app.get_subcommands({}).back()] = std::move(run);
  }
  CLI11_PARSE(app, argc, argv);
  try {
    for (auto& [sub, run] : runs)
      if (sub->parsed()) return run();
  } catch (const potop::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "potop: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "potop: error: out of memory (try a smaller --batch-size, --block-size or model)\n");
    return 1;
  }
  return 0;
}
