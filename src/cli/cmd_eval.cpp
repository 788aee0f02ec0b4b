// `potop eval`: a model's loss and perplexity, whatever its kind. A language model (a causal
// decoder, a bag of words) scores the windows of a text (bits per character too); a kind whose
// scoring is its own does it in its folder (ModelKind::evaluate: a translation model's sentence
// pairs, a BERT's masked tokens).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_args.h"
#include "core/error.h"
#include "core/threads.h"
#include "data/dataset.h"
#include "train/batch_parallel.h"
#include "train/eval_text.h"
#include "train/evaluate.h"

namespace potop::cli {

namespace {

struct EvalArgs {
  ModelArgs model;
  EvalRequest request;  // what a kind's own scoring reads too (nn/model_kind.h)
  bool json = false;
};

void print_json(const nlohmann::json& j) {
  std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// A language model (a causal decoder, a bag of words) on every window of a text: loss per token,
// perplexity and bits per character.
int eval_windows_of_text(const EvalRequest& a, bool json, LoadedModel& m) {
  if (a.data.empty()) throw Error("--data is required for " + m.kind->noun + ": a text file, or a data directory");
  // A bag-of-words LM was trained with the words its vocabulary lacks as <unk>: scored as such.
  const Unknown policy = a.unknown_given ? a.unknown : m.kind->scored_unknown;
  EvalTokens text;
  read_eval_tokens(a, *m.tokenizer, "the model's tokenizer (" + m.weights.string() + ")", policy, text);
  const int B = a.batch_size, T = m.config.at("block_size").get<int>();
  const std::vector<EvalWindow> windows = eval_windows(text.tokens.size(), T, a.stride);
  if (windows.empty()) throw Error(a.data + ": needs at least 2 tokens to score");
  announce(m);
  if (text.unknown.count > 0)
    std::fprintf(stderr, "note: %s: %s %s\n", a.data.c_str(), text.unknown.describe().c_str(),
                 !a.unknown_given                ? "scored as <unk>, as in training"
                 : policy == Unknown::kSkip ? "left out (--unknown)"
                                            : "replaced (--unknown)");
  // Bits per character, the unit every tokenizer shares: each scored token counts the
  // characters of its text (Tokenizer::char_count; a byte token counts 1 for a character's
  // first byte, 0 for the others).
  std::vector<int> characters(static_cast<size_t>(m.tokenizer->size()));
  for (int id = 0; id < m.tokenizer->size(); ++id) characters[size_t(id)] = m.tokenizer->char_count(id);
  std::vector<int> x(size_t(B) * T), y(size_t(B) * T);
  BatchParallel parallel(*m.model, std::min(get_threads(), B));
  size_t first = 0;
  long scored_chars = 0;
  const LossTotal total = evaluate_loss(parallel, [&](Batch& batch) {
    if (first >= windows.size()) return false;
    fill_eval_batch(x.data(), y.data(), text.tokens, windows, first, B, T);
    for (const int target : y)
      if (target >= 0) scored_chars += characters[size_t(target)];
    first += B;
    batch = Batch{{B, T}, x.data(), y.data()};
    return true;
  });
  const long counted = total.targets;
  const double loss = total.mean();
  const double perplexity = std::exp(loss), bits = total.sum / std::log(2.0) / std::max(1L, scored_chars);
  if (json) {
    print_json({{"kind", m.kind->name},
                {"loss", loss},
                {"perplexity", perplexity},
                {"bits_per_char", bits},
                {"tokens", counted},
                {"characters", scored_chars},
                {"unknown", text.unknown.count},
                {"checkpoint", m.weights.string()}});
  } else {
    std::printf("%s (%s): %ld tokens, %ld characters scored\nloss %.4f per token | perplexity %.3f | bits/char %.4f\n",
                a.data.c_str(), m.weights.string().c_str(), counted, scored_chars, loss, perplexity, bits);
  }
  return 0;
}

}  // namespace

Run add_eval(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "eval", "loss and perplexity of a model: a language model on a text, a translation model on sentence pairs");
  auto args = std::make_shared<EvalArgs>();
  EvalRequest* a = &args->request;
  add_model_options(cmd, args->model);
  cmd->add_option("--data", a->data,
                  "UTF-8 text file to score, or a data directory from potop prepare; for a translation model a TSV "
                  "of sentence pairs (default: the model directory's test.tsv)");
  cmd->add_option("--split", a->split, "with a prepared data directory: the split to score, val (default) or train")
      ->check(CLI::IsMember({"val", "train"}));
  auto* unknown = add_choice(cmd, "--unknown", unknown_choice(a->unknown),
                             "characters the model's vocabulary lacks: error (refuse the text), skip them, or replace "
                             "them (by a space, or the first character); the count and which ones are reported (a "
                             "bag-of-words LM: replace, by <unk>)");
  cmd->add_option("--columns", a->columns,
                  "sentence pairs: the languages of the file's columns (default: the model's training data)");
  cmd->add_option("--batch-size", a->batch_size, "windows (sentences) per forward pass")->capture_default_str();
  cmd->add_option("--stride", a->stride, "window advance; 0 = block size (non-overlapping)")->capture_default_str();
  cmd->add_option("--mask-fraction", a->mask_fraction, "a BERT: the fraction of tokens masked and scored")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0).description("") & CLI::TypeValidator<double>());
  add_seed(cmd, "--seed", a->seed, "a BERT: the seed of the masks (the same seed, the same masks)");
  cmd->add_flag("--json", args->json, "print the result as one JSON object");
  return [args, a, cmd, unknown]() {
    if (a->batch_size < 1) throw Error("--batch-size must be positive (got " + std::to_string(a->batch_size) + ")");
    a->unknown_given = unknown->count() > 0;
    a->model = args->model.model;
    LoadedModel m = load_model(args->model);
    const ModelKind& kind = *m.kind;
    if (!kind.can(Task::kLanguageModel) && !kind.can(Task::kSeq2Seq) && !kind.can(Task::kMaskedLM))
      throw wrong_kind(a->model, kind, "a model potop eval scores");
    const bool pairs = kind.can(Task::kSeq2Seq);
    // Flags of the other way of scoring are refused, not ignored.
    for (const char* flag : pairs ? std::vector<const char*>{"--split", "--stride", "--unknown"}
                                  : std::vector<const char*>{"--columns"})
      if (cmd->get_option(flag)->count() > 0) throw Error(std::string(flag) + ": not for " + m.kind->noun + " (" + a->model + ")");
    if (kind.evaluate) {  // the kind's own scoring: sentence pairs, masked tokens
      a->announce = [choice = m.choice] { std::fprintf(stderr, "checkpoint: %s\n", choice.c_str()); };
      const EvalResult r = kind.evaluate(m, *a);
      if (args->json) print_json(r.json);
      else std::fputs(r.text.c_str(), stdout);
      return 0;
    }
    for (const char* flag : {"--mask-fraction", "--seed"})
      if (cmd->get_option(flag)->count() > 0)
        throw Error(std::string(flag) + ": only for " + kind_nouns(Task::kMaskedLM) + ", not " + m.kind->noun);
    return eval_windows_of_text(*a, args->json, m);
  };
}

}  // namespace potop::cli
