// potop: train, inspect, sample from and evaluate Transformer language models on a CPU.
#include <cstdio>
#include <map>
#include <string>

#include "cli/commands.h"
#include "cli/suggest.h"
#include "core/error.h"
#include "core/stop_signals.h"
#include "core/threads.h"

int main(int argc, char** argv) {
  potop::bound_openmp_spinning(argv);  // may start potop again: before any thread or output
  potop::start_signal_listener();  // before any thread: stop signals without handlers (core/stop_signals.h)
  CLI::App app{"potop: train, inspect and sample Transformer language models on a CPU"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "potop 0.1.0");
  std::map<CLI::App*, potop::cli::Run> runs;
  for (auto add : {potop::cli::add_train, potop::cli::add_sample, potop::cli::add_eval,
                    potop::cli::add_plot, potop::cli::add_attention, potop::cli::add_info,
                    potop::cli::add_tokenizer, potop::cli::add_prepare, potop::cli::add_serve,
                    potop::cli::add_bow, potop::cli::add_translate, potop::cli::add_word2vec, potop::cli::add_bert,
                    potop::cli::add_classify, potop::cli::add_quantize, potop::cli::add_export, potop::cli::add_import,
                    potop::cli::add_chat_template}) {
    auto run = add(app);
    runs[app.get_subcommands({}).back()] = std::move(run);
  }
  try {
    app.parse(argc, argv);
  } catch (const potop::Error& e) {  // a flag's value refused while parsing (--norm middle)
    std::fprintf(stderr, "potop: error: %s\n", e.what());
    return 1;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // A usage error is one line too, naming the flag, with where to read about it; exit 2.
    std::string command = "potop";
    for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
    std::fprintf(stderr, "potop: error: %s%s (see %s --help)\n", e.what(), potop::cli::did_you_mean(app).c_str(),
                 command.c_str());
    return 2;
  }
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
  } catch (const std::exception& e) {  // e.g. std::filesystem::filesystem_error: still one line, exit 1
    std::fflush(stdout);
    std::fprintf(stderr, "potop: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
