// `potop tokenizer train|encode|decode|import`: build a tokenizer directory (tokenizer.json and
// the kind's files) that `potop train --tokenizer DIR` uses, and look at what it does to text.
// encode and decode work line by line on standard input and output, so they compose with other
// tools: one line of space-separated ids (or pieces, with --pieces) per line of text.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "cli/flags.h"
#include "core/error.h"
#include "core/file_io.h"
#include "data/text_file.h"
#include "tokenizer/byte_bpe_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/wordpiece_tokenizer.h"
#include "tokenizer/train_tokenizer.h"

namespace potop::cli {
namespace {

namespace fs = std::filesystem;

struct TokenizerArgs {
  // train
  TokenizerTrainOptions train;
  std::string data;
  // import: a SentencePiece model, GPT-2's two files, BERT's vocab.txt or a tokenizer.json
  std::string model, vocab, merges, hf_json;
  // train and import
  std::string out;
  bool force = false;
  // encode and decode
  std::string tokenizer;
  bool pieces = false;
  bool whole = false;
  Unknown unknown = Unknown::kError;
};

// The files a tokenizer directory holds, all that --force may replace there: the kinds' files and
// tokenizer.json, which names the kind.
std::vector<std::string> tokenizer_dir_files() {
  std::vector<std::string> names = all_tokenizer_files();
  names.push_back("tokenizer.json");
  return names;
}

// Refuses an --out it may not write into: like `potop train`, an --out that holds files is written
// into only with --force, which replaces the tokenizer's files there and keeps the others; never a
// file the command reads. Called before any work too, so that the refusal is quick.
void check_out_dir(const std::string& out_flag, bool force, const std::vector<NamedInput>& inputs) {
  const fs::path out = out_flag;
  std::error_code ec;
  const bool exists = fs::exists(out, ec);
  if (exists && !fs::is_directory(out, ec)) throw Error("--out " + out_flag + ": exists and is not a directory");
  if (exists && !fs::is_empty(out, ec) && !force)
    throw Error("--out " + out_flag + ": already exists and is not empty; replace the tokenizer's files in it with "
                "--force (other files stay), or choose another --out");
  // --force replaces a tokenizer directory, never a model's (its tokenizer is part of the model).
  if (exists && fs::exists(out / "config.json", ec))
    throw Error("--out " + out_flag + ": a model's directory (it holds config.json), which --force does not replace; "
                "choose another --out");
  // No command writes over its own input (a Hugging Face directory's tokenizer.json, BERT's vocab.txt).
  for (const std::string& name : tokenizer_dir_files())
    refuse_writing_over_input(out / name, "--out", "--out " + out_flag + ": its " + name + " is", inputs);
}

// Writes the tokenizer into --out: a new directory as a whole or not at all; into an existing one
// (--force), replacing only the tokenizer's own files and keeping every other (replace_owned_files).
void write_out_dir(const Tokenizer& tokenizer, const std::string& out_flag, bool force,
                   const std::vector<NamedInput>& inputs) {
  check_out_dir(out_flag, force, inputs);
  fs::path out = fs::path(out_flag).lexically_normal();
  if (!out.has_filename()) out = out.parent_path();  // "tok/": the directory tok
  ensure_writable_directory(out.has_parent_path() ? out.parent_path() : fs::path("."));
  const auto save = [&](const fs::path& staging) { save_tokenizer_dir(tokenizer, staging); };
  std::error_code ec;
  if (fs::exists(out, ec)) replace_owned_files(out, save, tokenizer_dir_files());
  else write_directory_atomic(out, save);
}

// "1 2 3" or "▁Pan <0x0A>": one line of output.
std::string join_tokens(const Tokenizer& tokenizer, const std::vector<int>& ids, bool pieces) {
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) line += ' ';
    line += pieces ? tokenizer.piece(ids[i]) : std::to_string(ids[i]);
  }
  return line;
}

int run_train(const TokenizerArgs& a) {
  const auto start = std::chrono::steady_clock::now();
  check_tokenizer_train_options(a.train);
  const std::vector<NamedInput> inputs{{"--data", a.data}};
  check_out_dir(a.out, a.force, inputs);
  // The byte tokenizer learns nothing; every other kind reads the text (errors name the file).
  std::string text;
  if (a.train.kind != TokenizerKind::kByte || !a.data.empty()) {
    if (a.data.empty()) throw Error("--data is needed to train a tokenizer of this kind");
    text = read_utf8_text(a.data);
  }
  if (a.train.kind == TokenizerKind::kBpe || a.train.kind == TokenizerKind::kUnigram)
    std::fprintf(stderr, "training a %s tokenizer of %ld tokens on %s (%.1f MB)...\n",
                 a.train.kind == TokenizerKind::kBpe ? "bpe" : "unigram", a.train.vocab_size,
                 a.data.c_str(), static_cast<double>(text.size()) / 1e6);
  const std::unique_ptr<Tokenizer> tokenizer = train_tokenizer(text, a.data, a.train);
  write_out_dir(*tokenizer, a.out, a.force, inputs);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "wrote %s: a %s tokenizer of %d tokens, in %.1f s\n", a.out.c_str(), tokenizer->kind().c_str(),
               tokenizer->size(), seconds);
  return 0;
}

int run_import(const TokenizerArgs& a) {
  const bool wordpiece = !a.vocab.empty() && a.merges.empty() && fs::path(a.vocab).extension() == ".txt";
  const bool gpt2 = !wordpiece && (!a.vocab.empty() || !a.merges.empty());
  const int given = int{!a.model.empty()} + int{gpt2} + int{wordpiece} + int{!a.hf_json.empty()};
  if (given != 1 || (gpt2 && (a.vocab.empty() || a.merges.empty())))
    throw Error("tokenizer import: give --model (a SentencePiece .model file), --vocab and --merges (GPT-2's "
                "vocab.json and merges.txt), --vocab alone (BERT's vocab.txt) or --hf-json (a Hugging Face tokenizer.json)");
  const std::vector<NamedInput> inputs{{"--model", a.model}, {"--vocab", a.vocab}, {"--merges", a.merges}, {"--hf-json", a.hf_json}};
  check_out_dir(a.out, a.force, inputs);  // before the work, so that a refusal is quick
  std::unique_ptr<Tokenizer> tokenizer;
  std::string from;
  if (gpt2) {
    tokenizer = ByteBpeTokenizer::load(a.vocab, a.merges);
    from = a.vocab + " and " + a.merges;
  } else if (wordpiece) {
    tokenizer = WordPieceTokenizer::load_vocab_txt(a.vocab);
    from = a.vocab;
  } else if (!a.hf_json.empty()) {
    tokenizer = load_hf_tokenizer_json(a.hf_json);
    from = a.hf_json;
  } else {
    tokenizer = SentencePieceTokenizer::load(a.model);
    from = a.model;
  }
  write_out_dir(*tokenizer, a.out, a.force, inputs);
  std::fprintf(stderr, "wrote %s: a %s tokenizer of %d tokens from %s\n", a.out.c_str(), tokenizer->kind().c_str(),
               tokenizer->size(), from.c_str());
  return 0;
}

// Output in 64 KiB blocks rather than a write per line (encoding is fast enough for that to
// matter), but line by line to a terminal, where someone waits for each answer.
class Output {
 public:
  Output() : interactive_(::isatty(STDOUT_FILENO)) {}
  ~Output() { flush(); }
  void line(const std::string& text) {
    buffer_ += text;
    buffer_ += '\n';
    if (interactive_ || buffer_.size() >= (1 << 16)) flush();
  }
  void flush() {
    std::fwrite(buffer_.data(), 1, buffer_.size(), stdout);
    std::fflush(stdout);
    buffer_.clear();
  }

 private:
  bool interactive_;
  std::string buffer_;
};

int run_encode(const TokenizerArgs& a) {
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer_dir(a.tokenizer);
  std::ios::sync_with_stdio(false);  // getline on std::cin at the speed of a buffered read
  UnknownReport unknown;
  Output out;
  std::string line;
  if (a.whole) {  // one text, newlines and all
    std::stringstream all;
    all << std::cin.rdbuf();
    out.line(join_tokens(*tokenizer, tokenizer->encode(all.str(), "standard input", a.unknown, &unknown), a.pieces));
  }
  for (long n = 1; !a.whole && std::getline(std::cin, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF input: the line without its \r
    out.line(join_tokens(*tokenizer, tokenizer->encode(line, "standard input, line " + std::to_string(n), a.unknown,
                                                       &unknown), a.pieces));
  }
  out.flush();
  if (unknown.count > 0)
    std::fprintf(stderr, "note: %s %s (--unknown)\n", unknown.describe().c_str(),
                 a.unknown == Unknown::kSkip ? "left out" : "replaced");
  return 0;
}

int run_decode(const TokenizerArgs& a) {
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer_dir(a.tokenizer);
  std::ios::sync_with_stdio(false);
  Output out;
  std::string line;
  std::vector<int> ids;
  for (long n = 1; std::getline(std::cin, line); ++n) {
    ids.clear();
    size_t at = 0;
    while (at < line.size()) {
      while (at < line.size() && (line[at] == ' ' || line[at] == '\t' || line[at] == '\r')) ++at;
      if (at == line.size()) break;
      size_t end = at;
      while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != '\r') ++end;
      const std::string word = line.substr(at, end - at);
      size_t used = 0;
      long id = -1;
      try {
        id = std::stol(word, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != word.size() || id < 0 || id >= tokenizer->size())
        throw Error("standard input, line " + std::to_string(n) + ": '" + word + "' is not a token id (0.." +
                    std::to_string(tokenizer->size() - 1) + ")");
      ids.push_back(static_cast<int>(id));
      at = end;
    }
    out.line(tokenizer->decode(ids));
  }
  return 0;
}

}  // namespace

Run add_tokenizer(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("tokenizer", "train, import and try tokenizers (char, byte, word, bpe, unigram)");
  cmd->require_subcommand(1);
  auto a = std::make_shared<TokenizerArgs>();

  CLI::App* train = cmd->add_subcommand("train", "learn a tokenizer from a text and write it as a tokenizer directory");
  // Required, so the help shows no default.
  add_choice(train, "--kind", tokenizer_kind_choice(a->train.kind), "the kind of tokenizer")->required()->default_str("");
  train->add_option("--data", a->data, "UTF-8 training text (bpe, unigram: one sentence per line)");
  train->add_option("--out", a->out, "tokenizer directory to write")->required();
  train->add_option("--vocab-size", a->train.vocab_size,
                    "tokens, specials included (bpe, unigram: needed, e.g. 8000; word: at most this many; char, "
                    "byte: fixed by the kind)");
  train->add_option("--min-count", a->train.min_count, "word: keep words seen at least this often")
      ->capture_default_str();
  train->add_flag("--lowercase", a->train.lowercase, "word: lowercase the text first (case is lost)");
  train->add_flag("--force", a->force, "replace an --out that is not empty");
  train->add_flag("--verbose", a->train.verbose, "bpe, unigram: show SentencePiece's log");

  CLI::App* import = cmd->add_subcommand(
      "import", "make a tokenizer directory from a SentencePiece .model file, GPT-2's vocab.json and merges.txt, "
                "BERT's vocab.txt or a Hugging Face tokenizer.json (WordPiece or byte-level BPE)");
  import->add_option("--model", a->model, "bpe or unigram .model file (spm_train's, special ids 0..3)");
  import->add_option("--vocab", a->vocab,
                     "GPT-2's vocab.json (byte-level BPE; with --merges), or BERT's vocab.txt (WordPiece; options from "
                     "tokenizer_config.json beside it)");
  import->add_option("--merges", a->merges, "GPT-2's merges.txt (vocab.bpe)");
  import->add_option("--hf-json", a->hf_json,
                     "a Hugging Face tokenizer.json: WordPiece (BERT's) or byte-level BPE (GPT-2's, Llama 3's, SmolLM's), "
                     "with tokenizer_config.json beside it where there is one");
  import->add_option("--out", a->out, "tokenizer directory to write")->required();
  import->add_flag("--force", a->force, "replace an --out that is not empty");

  CLI::App* encode = cmd->add_subcommand("encode", "text on standard input -> one line of token ids per line");
  encode->add_option("-t,--tokenizer", a->tokenizer, "tokenizer directory (or a model directory)")->required();
  encode->add_flag("--pieces", a->pieces, "print the tokens' pieces (▁ for a space) instead of their ids");
  encode->add_flag("--whole", a->whole, "encode all of standard input as one text (newlines included): one line out");
  add_choice(encode, "--unknown", unknown_choice(a->unknown),
             "text the vocabulary lacks: error, skip it, or replace it (<unk>)");

  CLI::App* decode = cmd->add_subcommand("decode", "lines of space-separated token ids on standard input -> text");
  decode->add_option("-t,--tokenizer", a->tokenizer, "tokenizer directory (or a model directory)")->required();

  return [a, train, import, encode, decode]() {
    if (train->parsed()) return run_train(*a);
    if (import->parsed()) return run_import(*a);
    if (encode->parsed()) return run_encode(*a);
    if (decode->parsed()) return run_decode(*a);
    return 1;
  };
}

}  // namespace potop::cli
