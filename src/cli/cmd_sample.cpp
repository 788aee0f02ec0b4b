// `potop sample`: generate text from a trained model, streaming it as it comes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_args.h"
#include "core/error.h"
#include "core/profile.h"
#include "data/text_file.h"
#include "generate/generator.h"
#include "generate/stop_strings.h"
#include "tokenizer/utf8.h"

namespace potop::cli {

namespace {

struct SampleArgs {
  ModelArgs model;
  std::string prompt, prompt_file;
  int tokens = 500, num_samples = 1;
  uint64_t seed = 1337;
  std::vector<std::string> stop;
  bool ignore_eos = false;
  bool json = false, profile = false;
  std::string kv_cache = "f32";
  SamplingOptions sampling;
};

using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// The two phases of a sample, as llama.cpp reports them: reading the prompt (until the first new
// token, which the prompt's last logits give) and generating the rest, one forward pass a token.
struct PhaseTimes {
  int samples = 0;
  long after_first = 0;
  double prompt_total = 0, generation_total = 0;
  void add(double prompt_s, int tokens_after_first, double generation_s) {
    ++samples, prompt_total += prompt_s, after_first += tokens_after_first, generation_total += generation_s;
  }
  double prompt_seconds() const { return samples > 0 ? prompt_total / samples : 0.0; }  // per sample
  double prompt_rate(int prompt_tokens) const {
    return prompt_total > 0 ? double(prompt_tokens) * samples / prompt_total : 0.0;
  }
  double generation_rate() const { return generation_total > 0 ? after_first / generation_total : 0.0; }
};

// The prompt: --prompt, "-" for standard input, or --prompt-file; a newline when none is given
// (or the vocabulary's first token, when it has no newline).
std::string read_prompt(const SampleArgs& a, const Tokenizer& tokenizer) {
  if (!a.prompt_file.empty()) return read_utf8_text(a.prompt_file);
  if (a.prompt == "-") {
    std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    if (text.empty()) throw Error("--prompt -: standard input is empty");
    return text;
  }
  if (!a.prompt.empty()) return a.prompt;
  return tokenizer.can_encode("\n") ? std::string("\n") : tokenizer.decode_one(0);
}

}  // namespace

Run add_sample(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("sample", "generate text from a trained model, streaming it as it comes");
  auto a = std::make_shared<SampleArgs>();
  add_model_options(cmd, a->model);
  auto* prompt_flag = cmd->add_option("-p,--prompt", a->prompt, "text to continue, or - to read it from standard input "
                                                             "(default: a newline)");
  cmd->add_option("--prompt-file", a->prompt_file, "read the text to continue from this file")->excludes(prompt_flag);
  cmd->add_option("-n,--tokens", a->tokens, "tokens (characters) to generate per sample")->capture_default_str();
  cmd->add_option("--num-samples", a->num_samples, "samples to generate, each from the prompt (seeds seed, seed+1, …)")
      ->capture_default_str();
  cmd->add_option("--temperature", a->sampling.temperature, "0 = always the most likely token")->capture_default_str();
  cmd->add_option("--top-k", a->sampling.top_k, "sample among the k most likely (0 = all)")->capture_default_str();
  cmd->add_option("--top-p", a->sampling.top_p, "sample among the most likely with this total probability")
      ->capture_default_str();
  cmd->add_option("--min-p", a->sampling.min_p,
                  "drop tokens less likely than this fraction of the likeliest one (0 = off)")
      ->capture_default_str();
  cmd->add_option("--repeat-penalty", a->sampling.repeat_penalty,
                  "make tokens of the last --repeat-last-n less likely: a positive logit is divided by it, a "
                  "negative one multiplied (1 = off)")
      ->capture_default_str();
  cmd->add_option("--presence-penalty", a->sampling.presence_penalty,
                  "subtract this from the logit of every token of the last --repeat-last-n (0 = off)")
      ->capture_default_str();
  cmd->add_option("--repeat-last-n", a->sampling.repeat_last_n, "recent tokens the penalties look at")
      ->capture_default_str();
  cmd->add_option("--stop", a->stop, "stop a sample where this text appears (not printed); may be repeated");
  cmd->add_flag("--ignore-eos", a->ignore_eos,
                "go on past the model's end of text (an imported model's <|endoftext|>, which otherwise ends a sample)");
  add_seed(cmd, "-s,--seed", a->seed, "random seed");
  cmd->add_flag("--json", a->json, "print the samples as one JSON object instead of streaming them");
  cmd->add_flag("--profile", a->profile, "print the time of each kernel, over all samples, at the end");
  add_kv_cache_option(cmd, a->kv_cache);
  return [a]() {
    const KVCacheType cache_type = parse_kv_cache_type(a->kv_cache, "--kv-cache");
    if (a->tokens < 0) throw Error("--tokens must be >= 0 (got " + std::to_string(a->tokens) + ")");
    if (a->num_samples < 1) throw Error("--num-samples must be >= 1 (got " + std::to_string(a->num_samples) + ")");
    validate(a->sampling, 0);
    LoadedModel m = load_model_for(a->model, Task::kCausalLM, kind_nouns(Task::kCausalLM));
    CausalLM& lm = *task<CausalLM>(*m.model);
    lm.set_kv_cache_type(cache_type);
    fit_generation_threads(a->model, m.model->parameters().count());
    const Tokenizer& tokenizer = *m.tokenizer;
    const std::vector<int> ends = a->ignore_eos ? std::vector<int>{} : end_of_text_ids(m);
    const std::string prompt = read_prompt(*a, tokenizer);
    const std::vector<int> ids = tokenizer.encode(prompt, "--prompt");
    if (ids.empty()) throw Error("--prompt holds no token to start from");
    announce(m);
    const int block = lm.context_length();
    if (static_cast<int>(ids.size()) > block)
      std::fprintf(stderr, "note: the prompt is %zu tokens but the model's context is %d: it sees the last %d\n",
                   ids.size(), block, block);

    nlohmann::json samples = nlohmann::json::array();
    long generated = 0;
    PhaseTimes phases;
    profile::enable(a->profile);
    const auto start = Clock::now();
    for (int k = 0; k < a->num_samples; ++k) {
      if (k > 0 && !a->json) std::fputs("\n---\n", stdout);
      if (!a->json) std::fwrite(prompt.data(), 1, prompt.size(), stdout), std::fflush(stdout);
      StopStrings stops(a->stop);
      bool ended = false;  // at the model's end of text, which is not shown
      int count = 0;
      const auto sample_start = Clock::now();
      auto first = sample_start, last = sample_start;
      generate(lm, ids, a->tokens, a->sampling, a->seed + static_cast<uint64_t>(k), [&](int id) {
        last = Clock::now();
        if (count == 0) first = last;
        ++count;
        if (std::find(ends.begin(), ends.end(), id) != ends.end()) {
          ended = true;
          return false;
        }
        const std::string shown = stops.push(tokenizer.decode_one(id));
        if (!a->json) std::fwrite(shown.data(), 1, shown.size(), stdout), std::fflush(stdout);
        return !stops.stopped();
      });
      const std::string rest = stops.flush();
      if (!a->json) std::fwrite(rest.data(), 1, rest.size(), stdout);
      generated += count;
      const double prompt_s = seconds_between(sample_start, first), generation_s = seconds_between(first, last);
      if (count > 0) phases.add(prompt_s, count - 1, generation_s);
      samples.push_back({{"text", prompt + stops.text()},
                         {"tokens", count},
                         {"finish_reason", stops.stopped() || ended ? "stop" : "length"},
                         {"prompt_seconds", prompt_s},
                         {"generation_tokens_per_s", generation_s > 0 ? (count - 1) / generation_s : 0.0}});
    }
    const double seconds = seconds_between(start, Clock::now());
    const double rate = seconds > 0 ? generated / seconds : 0.0;
    const int prompt_tokens = std::min(static_cast<int>(ids.size()), block);
    if (a->json) {
      const nlohmann::json out = {{"checkpoint", m.weights.string()},
                                  {"samples", samples},
                                  {"tokens_per_s", rate},
                                  {"seconds", seconds},
                                  {"prompt_tokens", prompt_tokens},
                                  {"prompt_seconds", phases.prompt_seconds()},
                                  {"prompt_tokens_per_s", phases.prompt_rate(prompt_tokens)},
                                  {"generation_tokens_per_s", phases.generation_rate()}};
      std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      std::fputc('\n', stdout);
    }
    std::fflush(stdout);
    std::fprintf(stderr, "sample: %ld tokens in %.2f s, %.0f tokens/s", generated, seconds, rate);
    if (phases.samples > 0)
      std::fprintf(stderr, " (the prompt's %d tokens: %.3f s, %.0f tokens/s; then %.1f tokens/s)", prompt_tokens,
                   phases.prompt_seconds(), phases.prompt_rate(prompt_tokens), phases.generation_rate());
    std::fputc('\n', stderr);
    if (a->profile) profile::print(stderr);
    return 0;
  };
}

}  // namespace potop::cli
