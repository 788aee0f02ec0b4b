// `potop eval`: a model's loss, perplexity and bits per character on a text.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_args.h"
#include "core/error.h"
#include "core/threads.h"
#include "data/dataset.h"
#include "data/prepared_data.h"
#include "data/text_file.h"
#include "train/batch_parallel.h"
#include "train/evaluate.h"
#include "tokenizer/utf8.h"

namespace potop::cli {

namespace {

struct EvalArgs {
  ModelArgs model;
  std::string data;
  std::string split;  // prepared data: "val" (default) or "train"
  Unknown unknown = Unknown::kError;
  int batch_size = 16, stride = 0;
  bool json = false;
};

}  // namespace

Run add_eval(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("eval", "loss, perplexity and bits per character of a model on a text file");
  auto a = std::make_shared<EvalArgs>();
  add_model_options(cmd, a->model);
  cmd->add_option("--data", a->data, "UTF-8 text file to score, or a data directory from potop prepare")->required();
  cmd->add_option("--split", a->split, "with a prepared data directory: the split to score, val (default) or train")
      ->check(CLI::IsMember({"val", "train"}));
  add_choice(cmd, "--unknown", unknown_choice(a->unknown),
             "characters the model's vocabulary lacks: error (refuse the text), skip them, or replace them (by a "
             "space, or the first character); the count and which ones are reported");
  cmd->add_option("--batch-size", a->batch_size, "windows per forward pass")->capture_default_str();
  cmd->add_option("--stride", a->stride, "window advance; 0 = block size (non-overlapping)")->capture_default_str();
  cmd->add_flag("--json", a->json, "print the result as one JSON object");
  return [a]() {
    if (a->batch_size < 1) throw Error("--batch-size must be positive (got " + std::to_string(a->batch_size) + ")");
    LoadedModel m = load_model(a->model);
    // A text is encoded here; a prepared data directory is read through its mapped shards.
    UnknownReport unknown;
    std::vector<int> encoded;
    std::optional<PreparedData> prepared;
    TokenView tokens;
    if (is_data_directory(a->data)) {
      prepared.emplace(PreparedData::open(a->data));
      check_tokenizer(*prepared, *m.tokenizer, "the model's tokenizer (" + m.weights.string() + ")");
      const DataSplit split = a->split == "train" ? DataSplit::kTrain : DataSplit::kVal;
      if (prepared->size(split) == 0)
        throw Error(a->data + ": has no " + to_string(split) + " split (prepared with --val-fraction 0); pass --split train");
      tokens = TokenView(*prepared, split);
    } else {
      if (!a->split.empty()) throw Error("--split " + a->split + ": only for a data directory from potop prepare");
      const std::string text = read_utf8_text(a->data);
      // Characters the vocabulary lacks are counted first, so that the error names them all.
      const Unknown policy = a->unknown == Unknown::kError ? Unknown::kSkip : a->unknown;
      encoded = m.tokenizer->encode(text, a->data, policy, &unknown);
      if (unknown.count > 0 && a->unknown == Unknown::kError)
        throw Error(a->data + ": " + unknown.describe() + "; pass --unknown skip or --unknown replace to score the rest");
      tokens = TokenView(encoded);
    }
    const int B = a->batch_size, T = m.config.block_size;
    const std::vector<EvalWindow> windows = eval_windows(tokens.size(), T, a->stride);
    if (windows.empty()) throw Error(a->data + ": needs at least 2 characters to score");
    announce(m);
    if (unknown.count > 0)
      std::fprintf(stderr, "note: %s: %s %s (--unknown)\n", a->data.c_str(), unknown.describe().c_str(),
                   a->unknown == Unknown::kSkip ? "left out" : "replaced");
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
      fill_eval_batch(x.data(), y.data(), tokens, windows, first, B, T);
      for (const int target : y)
        if (target >= 0) scored_chars += characters[size_t(target)];
      first += B;
      batch = Batch{{B, T}, x.data(), y.data()};
      return true;
    });
    const long counted = total.targets;
    const double loss = total.mean();
    const double perplexity = std::exp(loss), bits = total.sum / std::log(2.0) / std::max(1L, scored_chars);
    if (a->json) {
      std::printf("%s\n", nlohmann::json{{"loss", loss},
                                         {"perplexity", perplexity},
                                         {"bits_per_char", bits},
                                         {"tokens", counted},
                                         {"characters", scored_chars},
                                         {"unknown", unknown.count},
                                         {"checkpoint", m.weights.string()}}
                              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                              .c_str());
    } else {
      std::printf("%s (%s): %ld tokens, %ld characters scored\nloss %.4f per token | perplexity %.3f | bits/char %.4f\n",
                  a->data.c_str(), m.weights.string().c_str(), counted, scored_chars, loss, perplexity, bits);
    }
    return 0;
  };
}

}  // namespace potop::cli
