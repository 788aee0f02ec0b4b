// `potop translate`: an encoder-decoder translation model.
//   potop translate --model DIR [--input FILE] [--beam K] [--alpha A] [--max-len N] [--batch-sentences N]
//       translates one sentence per line (stdin, or --input), writing one line per sentence,
//       flushed as each is done — or as each batch of N sentences decoded together is done;
//   potop translate train --data PAIRS.tsv --source en --target pl --out DIR   (or --resume DIR)
//   potop translate pretrain --data en.txt --data pl.txt --tokenizer DIR --out DIR   T5's span
//       corruption on plain text; then translate train --init-from DIR fine-tunes the model
//   potop translate eval --model DIR --data PAIRS.tsv      BLEU and chrF, with their signature
//   potop translate attention --model DIR --text SRC --translation TGT   the cross-attention map

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "models/encoder_decoder/translation_model.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_args.h"
#include "cli/train_command.h"
#include "cli/translation_pages.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/threads.h"
#include "data/parallel_corpus.h"
#include "models/encoder_decoder/translator.h"
#include "report/attention_map.h"
#include "report/translation_metrics.h"
#include "tokenizer/utf8.h"
#include "models/encoder_decoder/pretrain_trainer.h"
#include "models/encoder_decoder/translation_trainer.h"

namespace potop::cli {

namespace {

struct DecodeArgs {
  ModelArgs model;
  DecodeOptions decode;
  int batch_sentences = 0;  // 0: kDefaultBatchSentences for files, 1 (streaming) for stdin
};

void add_decode_options(CLI::App* cmd, DecodeArgs& a, bool model_required) {
  add_model_options(cmd, a.model, model_required);
  cmd->add_option("--beam", a.decode.beam, "beam width (1: greedy)")->capture_default_str()->check(CLI::Range(1, 64));
  cmd->add_option("--alpha", a.decode.alpha, "length penalty exponent ((5+|Y|)/6)^alpha of beam search")
      ->capture_default_str()->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--max-len", a.decode.max_extra, "at most (source tokens + this) target tokens")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_option("--batch-sentences", a.batch_sentences,
                  "sentences decoded together, each step one pass over all their hypotheses (default: " +
                      std::to_string(kDefaultBatchSentences) + " for a file, 1 for standard input)")
      ->check(CLI::Range(1, 100000));
}

// Lines translated in batches of up to `batch` sentences (translate_batch), printed in input
// order; a blank line stays blank. A bad line stops the run after the lines before it are out.
int run_translate(const DecodeArgs& a, const std::string& input) {
  TranslationModel m = load_model_with(a.model, load_translation_model);
  std::fprintf(stderr, "potop: %s -> %s, %s\n", m.source.c_str(), m.target.c_str(), m.choice.c_str());
  std::ifstream file;
  if (!input.empty()) {
    file.open(input, std::ios::binary);
    if (!file) throw Error("--input " + input + ": cannot be opened");
  }
  std::istream& in = input.empty() ? std::cin : file;
  const std::string name = input.empty() ? "stdin" : input;
  const size_t batch = size_t(a.batch_sentences > 0 ? a.batch_sentences : input.empty() ? 1 : kDefaultBatchSentences);
  std::vector<std::vector<int>> sources;  // the pending lines' ids; empty for a blank line
  size_t nonblank = 0;
  auto flush = [&] {
    std::vector<std::vector<int>> todo;
    for (const std::vector<int>& s : sources)
      if (!s.empty()) todo.push_back(s);
    const std::vector<std::vector<int>> out = translate_batch(*m.model, todo, a.decode);
    size_t k = 0;
    for (const std::vector<int>& s : sources) std::printf("%s\n", s.empty() ? "" : m.tokenizer->decode(out[k++]).c_str());
    std::fflush(stdout);
    sources.clear();
    nonblank = 0;
  };
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (n == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // a file's byte-order mark
    const std::string where = name + ":" + std::to_string(n);
    if (!utf8_valid(line)) {
      flush();
      throw Error(where + ": invalid UTF-8");
    }
    const bool blank = line.find_first_not_of(" \t") == std::string::npos;
    sources.push_back(blank ? std::vector<int>{} : source_ids(m, line, where));
    nonblank += !blank;
    // Streaming (batch 1): every line, blank or not, goes out at once; else when N sentences wait.
    if (nonblank == batch || (nonblank == 0 && batch == 1)) flush();
  }
  flush();
  return 0;
}

}  // namespace

Run add_translate(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "translate", "translate sentences with an encoder-decoder model (one per line), or train and evaluate one");
  cmd->require_subcommand(0, 1);
  auto decode = std::make_shared<DecodeArgs>();
  auto input = std::make_shared<std::string>();
  add_decode_options(cmd, *decode, false);
  cmd->add_option("-i,--input", *input, "file of sentences, one a line (default: standard input)");

  // train
  CLI::App* train = cmd->add_subcommand("train", "train an encoder-decoder on a TSV of sentence pairs, or resume");
  auto options = std::make_shared<TranslationOptions>();
  auto flags = std::make_shared<TrainFlags>();
  add_train_flags(train, *flags, translation_fields(*options));

  // pretrain: --data is repeatable, kept as one '\n'-separated field (checkpoints keep strings)
  CLI::App* pretrain = cmd->add_subcommand(
      "pretrain", "pre-train an encoder-decoder on plain text by T5's span corruption, for translate train --init-from");
  auto pre_options = std::make_shared<PretrainOptions>();
  auto pre_flags = std::make_shared<TrainFlags>();
  auto pre_data = std::make_shared<std::vector<std::string>>();
  std::vector<Field> pre_fields = pretrain_fields(*pre_options);
  pre_fields.erase(pre_fields.begin());  // data: the repeatable flag below
  pretrain->add_option("--data", *pre_data, "text file, one text a line; repeat for more files (one per language)");
  add_train_flags(pretrain, *pre_flags, pre_fields);

  // eval
  CLI::App* eval = cmd->add_subcommand("eval", "BLEU and chrF of a model's translations of a TSV of pairs");
  auto eval_args = std::make_shared<DecodeArgs>();
  auto eval_data = std::make_shared<std::string>();
  auto eval_columns = std::make_shared<std::string>();
  auto eval_limit = std::make_shared<int>(0);
  add_decode_options(eval, *eval_args, true);
  eval->add_option("--data", *eval_data, "TSV of pairs (such as the test.tsv in the model directory)")->required();
  eval->add_option("--columns", *eval_columns, "languages of the file's columns (default: the model's training data)");
  eval->add_option("--limit", *eval_limit, "translate only the first N pairs (0: all)");

  // attention
  CLI::App* attn = cmd->add_subcommand("attention", "draw the cross-attention map of a sentence pair (HTML)");
  auto attn_args = std::make_shared<DecodeArgs>();
  auto attn_text = std::make_shared<std::string>(), attn_translation = std::make_shared<std::string>();
  auto attn_out = std::make_shared<std::string>();
  auto attn_layer = std::make_shared<int>(-1);
  auto attn_force = std::make_shared<bool>(false);
  add_model_options(attn, attn_args->model);
  attn->add_option("--text", *attn_text, "the source sentence")->required();
  attn->add_option("--translation", *attn_translation, "its translation (default: the model's own, greedy)");
  attn->add_option("--layer", *attn_layer, "one decoder layer (default: all)");
  attn->add_option("--out", *attn_out, "HTML file to write (default: cross-attention.html in the model directory)");
  add_output_force(attn, *attn_force, "--out");

  return [=]() -> int {
    if (train->parsed()) {
      collect_given(train, *flags, translation_fields(*options));
      return run_train_command(*flags, options->out, [&](std::FILE* log, const RunControl& control) {
        return train_translation(*options, log, control);
      });
    }
    if (pretrain->parsed()) {
      PretrainOptions& o = *pre_options;
      std::vector<Field> fields = pretrain_fields(o);
      fields.erase(fields.begin());
      collect_given(pretrain, *pre_flags, fields);
      o.data.clear();
      for (const std::string& f : *pre_data) {
        if (f.find('\n') != std::string::npos) throw Error("--data: a file name with a line break");
        o.data += (o.data.empty() ? "" : "\n") + f;
      }
      if (!pre_data->empty()) pre_flags->control.given.push_back("data");
      return run_train_command(*pre_flags, o.out, [&](std::FILE* log, const RunControl& control) {
        return pretrain_encoder_decoder(o, log, control);
      });
    }
    if (eval->parsed()) {
      TranslationModel m = load_model_with(eval_args->model, load_translation_model);
      require_sentence_pairs(m, eval_args->model.model);
      const bool source_first = source_is_first_column(m, *eval_columns, *eval_data);
      const PairFile file = read_pairs(*eval_data);
      if (file.skipped > 0) std::fprintf(stderr, "note: %s\n", describe_skipped(*eval_data, file).c_str());
      std::vector<std::string> hyps, refs;
      std::vector<std::vector<int>> sources;
      for (const SentencePair& p : file.pairs) {
        if (*eval_limit > 0 && int(sources.size()) == *eval_limit) break;
        const std::string& src = source_first ? p.first : p.second;
        sources.push_back(source_ids(m, src, *eval_data + ":" + std::to_string(p.line)));
        refs.push_back(source_first ? p.second : p.first);
      }
      const size_t batch = size_t(eval_args->batch_sentences > 0 ? eval_args->batch_sentences : kDefaultBatchSentences);
      const auto start = std::chrono::steady_clock::now();
      const auto outs = translate_in_batches(*m.model, sources, eval_args->decode, batch);
      for (const std::vector<int>& out : *outs) hyps.push_back(m.tokenizer->decode(out));
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const BleuScore bleu = corpus_bleu(hyps, refs);
      const double chrf = corpus_chrf(hyps, refs);
      char alpha_text[32];
      std::snprintf(alpha_text, sizeof alpha_text, "%g", double(eval_args->decode.alpha));
      std::printf("BLEU %.2f  (%.1f/%.1f/%.1f/%.1f, BP %.3f, hyp %ld, ref %ld)  signature %s\n", bleu.score,
                  bleu.precisions[0], bleu.precisions[1], bleu.precisions[2], bleu.precisions[3], bleu.brevity_penalty,
                  bleu.hyp_len, bleu.ref_len, kBleuSignature);
      std::printf("chrF %.2f  signature %s\n", chrf, kChrfSignature);
      std::printf("%zu sentences %s -> %s, %s, %.1f s (%.1f sentences/s)\n", hyps.size(), m.source.c_str(),
                  m.target.c_str(),
                  eval_args->decode.beam > 1
                      ? ("beam " + std::to_string(eval_args->decode.beam) + ", alpha " + alpha_text).c_str()
                      : "greedy",
                  seconds, double(hyps.size()) / std::max(seconds, 1e-9));
      return 0;
    }
    if (attn->parsed()) {
      if (!attn_out->empty()) check_output_file(*attn_out, "--out", *attn_force);
      TranslationModel m = load_model_with(attn_args->model, load_translation_model);
      write_cross_attention(*m.model, *m.tokenizer, *attn_text, *attn_translation, *attn_layer,
                            attn_out->empty() ? fs::path(attn_args->model.model) / "cross-attention.html"
                                              : fs::path(*attn_out));
      return 0;
    }
    if (decode->model.model.empty()) throw Error("--model is required: a model directory written by potop translate train");
    return run_translate(*decode, *input);
  };
}

}  // namespace potop::cli
