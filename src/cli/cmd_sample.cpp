#include <cstdio>
#include <memory>

#include "checkpoint/model_dir.h"
#include "cli/commands.h"
#include "core/error.h"
#include "core/threads.h"
#include "generate/generator.h"

namespace potop::cli {

namespace {

struct SampleArgs {
  std::string model, checkpoint, prompt;
  int tokens = 500, threads = 0;
  uint64_t seed = 1337;
  SamplingOptions sampling;
};

}  // namespace

Run add_sample(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("sample", "generate text from a trained model, streaming it as it comes");
  auto a = std::make_shared<SampleArgs>();
  cmd->add_option("--model", a->model, "model directory written by potop train")->required();
  cmd->add_option("--checkpoint", a->checkpoint, "best, latest or a .safetensors path (default: best, else latest)");
  cmd->add_option("--prompt", a->prompt, "text to continue (default: a newline)");
  cmd->add_option("--tokens", a->tokens, "characters to generate")->capture_default_str();
  cmd->add_option("--temperature", a->sampling.temperature, "0 = always the most likely character")->capture_default_str();
  cmd->add_option("--top-k", a->sampling.top_k, "sample among the k most likely (0 = all)")->capture_default_str();
  cmd->add_option("--top-p", a->sampling.top_p, "sample among the most likely with this total probability")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "random seed")->capture_default_str();
  cmd->add_option("--threads", a->threads, "threads to use (0 = all cores)")->capture_default_str();
  return [a]() {
    if (a->tokens < 0) throw Error("--tokens must be >= 0 (got " + std::to_string(a->tokens) + ")");
    apply_threads_flag(a->threads);
    LoadedModel m = load_model_dir(a->model, a->checkpoint);
    validate(a->sampling, m.config.vocab_size);
    std::string prompt = a->prompt.empty() ? std::string("\n") : a->prompt;
    if (a->prompt.empty() && !m.tokenizer->can_encode(prompt)) prompt = m.tokenizer->decode_one(0);
    const std::vector<int> ids = m.tokenizer->encode(prompt, "--prompt");
    std::fputs(prompt.c_str(), stdout);
    std::fflush(stdout);
    generate(*m.model, ids, a->tokens, a->sampling, a->seed, [&](int id) {
      const std::string piece = m.tokenizer->decode_one(id);
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    });
    std::fputc('\n', stdout);
    return 0;
  };
}

}  // namespace potop::cli
