// The options every command that uses a trained model shares, whatever its kind, and loading it:
// -m/--model, --checkpoint, -t/--threads. Loading says on stderr which checkpoint it took, and why.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "checkpoint/model_dir.h"

namespace potop::cli {

struct ModelArgs {
  std::string model, checkpoint;
  int threads = 0;
};

// `required` false: the command has another way to go without a model (potop translate train).
void add_model_options(CLI::App* cmd, ModelArgs& args, bool required = true);

// Applies --threads (0: all cores).
void apply_model_threads(const ModelArgs& args);
// Generating a token of a model under kOneThreadGeneration parameters is too little work to
// split: with --threads 0 it runs on one thread. On 2 cores the demo's model (0.8M) sampled at
// 14.5k tokens/s on one thread and 9.3k on two, and at 9.7k vs 3.6k beside a busy core; from
// 2.7M parameters two threads win (1.3-1.5x) on a quiet machine (bench/busy_core.py).
inline constexpr size_t kOneThreadGeneration = 1'000'000;
void fit_generation_threads(const ModelArgs& args, size_t parameters);
// --kv-cache f32|f16: what a causal language model's KV cache stores (sample, serve); the command
// parses it with parse_kv_cache_type (nn/kv_cache.h) and gives it to the model.
void add_kv_cache_option(CLI::App* cmd, std::string& type);
// Applies --threads, then loads the model with `loader` (load_model_dir's arguments).
template <class Loader>
auto load_model_with(const ModelArgs& args, Loader loader) {
  apply_model_threads(args);
  return loader(args.model, args.checkpoint);
}
// A model of any kind.
LoadedModel load_model(const ModelArgs& args);
// A model that can do `task` (nn/tasks.h); another is an Error saying it is not `wanted` and
// naming the command that takes it.
LoadedModel load_model_for(const ModelArgs& args, Task task, const std::string& wanted);

// Says on stderr which checkpoint was loaded, and why: "checkpoint: <path>: step N, val loss X".
// Commands call it once their inputs are checked, so that an error is the only thing they print.
template <class Loaded>
void announce(const Loaded& model) {
  std::fprintf(stderr, "checkpoint: %s\n", model.choice.c_str());
}

}  // namespace potop::cli
