// potop word2vec train|split|similar|analogy|evaluate: word vectors (src/word2vec/) and the
// questions asked of them. docs/word2vec.md has the commands and the comparison with gensim
// and fastText.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.h"
#include "cli/flags.h"
#include "core/stop_signals.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/safetensors.h"
#include "data/text_file.h"
#include "train/progress.h"
#include "tokenizer/word_tokenizer.h"
#include "models/word2vec/analogy.h"
#include "models/word2vec/word2vec_trainer.h"
#include "models/word2vec/vectors_file.h"

namespace potop::cli {
namespace {


struct Word2VecArgs {
  std::string data, out, vectors, word, analogies;
  std::vector<std::string> words;  // analogy: a b c
  Word2VecOptions train;
  CorpusOptions corpus;
  int k = 10;
  bool json = false, force = false;
};

const char* model_name(Word2VecModel m) { return m == Word2VecModel::kCbow ? "cbow" : "skipgram"; }
const char* split_name(WordSplit s) { return s == WordSplit::kIcu ? "icu" : "space"; }

void write_outputs(const std::filesystem::path& dir, const Vocabulary& vocab, const WordVectors& vectors,
                   const nlohmann::json& options) {
  KeyedVectors keyed{vocab.words, vectors.dim, vectors.input};
  write_word2vec_text(dir / "vectors.txt", keyed);
  write_word2vec_binary(dir / "vectors.bin", keyed);
  const Shape shape{static_cast<int64_t>(vocab.size()), static_cast<int64_t>(vectors.dim)};
  write_safetensors(dir / "vectors.safetensors",
                    {{"vectors", Dtype::F32, shape, vectors.input.data()},
                     {"output_vectors", Dtype::F32, shape, vectors.output.data()}},
                    {{"potop.word2vec", options.dump()}});
  nlohmann::json v{{"split", options["split"]}, {"lowercase", options["lowercase"]}, {"words", vocab.words},
                   {"counts", vocab.counts}};
  write_file_atomic(dir / "vocab.json", v.dump() + "\n");
}

// What `word2vec train` writes into --out: the only files its --force removes.
const std::vector<std::string> kOutputFiles = {"vectors.txt", "vectors.bin", "vectors.safetensors", "vocab.json",
                                               "metrics.jsonl", "train.json"};

// --out must be new or empty, or hold an earlier word2vec run's files and nothing else (replaced
// with --force). A directory with anything else (a model's, a tokenizer's, the user's) is refused
// whatever the flags: --force removes only what potop wrote. Returns the files --force replaces,
// removed once the input has been read (a run refused for its input leaves the old vectors).
std::vector<std::string> check_out(const std::filesystem::path& out, bool force) {
  std::error_code ec;
  if (!std::filesystem::exists(out, ec)) return {};
  if (!std::filesystem::is_directory(out, ec)) throw Error("--out " + out.string() + ": not a directory");
  std::vector<std::string> ours, others;
  for (const auto& e : std::filesystem::directory_iterator(out, ec)) {
    const std::string name = e.path().filename().string();
    const bool mine = std::find(kOutputFiles.begin(), kOutputFiles.end(), name) != kOutputFiles.end();
    (mine ? ours : others).push_back(name);
  }
  std::sort(others.begin(), others.end());
  auto list = [](const std::vector<std::string>& names) {
    std::string text;
    for (size_t i = 0; i < names.size() && i < 5; ++i) text += (i ? ", " : "") + names[i];
    return text + (names.size() > 5 ? ", ..." : "");
  };
  if (!others.empty())
    throw Error("--out " + out.string() + " holds files potop word2vec did not write (" + list(others) +
                "); choose another --out (--force replaces only word vectors)");
  if (!ours.empty() && !force)
    throw Error("--out " + out.string() + " already holds word vectors (" + list(ours) +
                "); replace them with --force, or choose another --out");
  return ours;
}

int run_train(const Word2VecArgs& a) {
  validate(a.train);
  const std::filesystem::path out(a.out);
  const std::vector<std::string> replaced = check_out(out, a.force);
  const std::string text = read_utf8_text(a.data);
  Vocabulary vocab;
  Corpus corpus;
  build_vocabulary(text, a.data, a.corpus, vocab, corpus);
  int64_t longest = 0;
  for (int64_t s = 0; s < corpus.sentences(); ++s)
    longest = std::max(longest, corpus.sentence_starts[s + 1] - corpus.sentence_starts[s]);
  if (static_cast<int64_t>(corpus.ids.size()) <= a.train.window)
    throw Error(a.data + ": " + std::to_string(corpus.ids.size()) + " words in the vocabulary, no more than --window " +
                std::to_string(a.train.window) + ": too little text to train on");
  if (longest < 2) throw Error(a.data + ": no line holds two words of the vocabulary: no context to learn from");
  std::fprintf(stderr, "%s: %lld words, %lld kept in a vocabulary of %d (min count %ld), %lld sentences\n",
               a.data.c_str(), static_cast<long long>(corpus.raw_words), static_cast<long long>(corpus.ids.size()),
               vocab.size(), a.corpus.min_count, static_cast<long long>(corpus.sentences()));

  nlohmann::json options{{"model", model_name(a.train.model)}, {"dim", a.train.dim}, {"window", a.train.window},
                         {"negative", a.train.negative}, {"sample", a.train.sample}, {"epochs", a.train.epochs},
                         {"alpha", a.train.alpha}, {"threads", a.train.threads}, {"seed", a.train.seed},
                         {"min_count", a.corpus.min_count}, {"split", split_name(a.corpus.split)},
                         {"lowercase", a.corpus.lowercase}, {"data", a.data}};
  // The input is good: only now is --out touched, so a refused run leaves no empty directory.
  std::error_code ec;
  for (const std::string& name : replaced) std::filesystem::remove(out / name, ec);
  if (!replaced.empty())
    std::fprintf(stderr, "note: --force: the word vectors that were in %s are removed\n", out.string().c_str());
  ensure_writable_directory(out);
  MetricsLog metrics((out / "metrics.jsonl").string());
  ProgressLine line(stderr);
  stop_on_signal();
  Word2VecProgress last;
  auto progress = [&](const Word2VecProgress& p) {
    last = p;
    const double rate = p.seconds > 0 ? static_cast<double>(p.words_done) / p.seconds : 0;
    const double eta = rate > 0 ? static_cast<double>(p.words_total - p.words_done) / rate : 0;
    char line_text[192];
    std::snprintf(line_text, sizeof line_text, "words %lld/%lld (%.1f%%) | alpha %.6f | %.0f words/s | ETA %s",
                  static_cast<long long>(p.words_done), static_cast<long long>(p.words_total),
                  100.0 * static_cast<double>(p.words_done) / static_cast<double>(p.words_total), p.alpha, rate,
                  ProgressLine::format_duration(eta).c_str());
    line.show(line_text);
    metrics.write({{"words", p.words_done}, {"words_total", p.words_total}, {"alpha", p.alpha},
                   {"words_per_s", rate}, {"seconds", p.seconds}});
  };
  const WordVectors vectors = train_word2vec(vocab, corpus, a.train, progress, [] { return stop_signal_received() != 0; });
  line.finish();
  const bool stopped = last.words_done < last.words_total;
  const double words_per_s = last.seconds > 0 ? static_cast<double>(last.words_done) / last.seconds : 0;
  options["words_per_s"] = words_per_s;
  options["seconds"] = last.seconds;
  options["stopped_early"] = stopped;
  write_outputs(out, vocab, vectors, options);
  write_file_atomic(out / "train.json", options.dump(2) + "\n");
  std::fprintf(stderr, "%s%s: vectors.txt, vectors.bin, vectors.safetensors, vocab.json (%d words, dim %d); %.0f words/s\n",
               stopped ? "stopped early; wrote the vectors so far to " : "wrote ", a.out.c_str(), vocab.size(),
               vectors.dim, words_per_s);
  return 0;
}

int run_split(const Word2VecArgs& a) {
  check_output_file(a.out, "--out", a.force, {{"--data", a.data}});
  const std::string text = read_utf8_text(a.data);
  std::string out;
  out.reserve(text.size());
  bool line_start = true;
  split_words(text, a.corpus, [&](std::string_view w) {
    if (w == "\n") {
      out += '\n';
      line_start = true;
      return;
    }
    if (!line_start) out += ' ';
    out.append(w);
    line_start = false;
  });
  if (!out.empty() && out.back() != '\n') out += '\n';
  write_file_atomic(a.out, out);
  return 0;
}

int find_word(const VectorIndex& index, const std::string& word, const std::string& where) {
  int id = index.id_of(word);
  if (id < 0) id = index.id_of(lowercase_text(word));
  if (id < 0) throw Error("'" + word + "' is not in the vocabulary of " + where);
  return id;
}

void print_neighbours(const VectorIndex& index, const std::vector<std::pair<int, float>>& best) {
  for (const auto& [id, score] : best)
    std::printf("%s\t%.6f\n", index.vectors().words[static_cast<size_t>(id)].c_str(), static_cast<double>(score));
}

int run_similar(const Word2VecArgs& a) {
  const VectorIndex index(read_word2vec(a.vectors));
  print_neighbours(index, index.most_similar({find_word(index, a.word, a.vectors)}, {}, a.k));
  return 0;
}

int run_analogy(const Word2VecArgs& a) {
  if (a.words.size() != 3) throw Error("analogy takes three words a b c (a is to b as c is to ?), got " +
                                       std::to_string(a.words.size()));
  const VectorIndex index(read_word2vec(a.vectors));
  const int x = find_word(index, a.words[0], a.vectors), y = find_word(index, a.words[1], a.vectors),
            z = find_word(index, a.words[2], a.vectors);
  print_neighbours(index, index.most_similar({y, z}, {x}, a.k));
  return 0;
}

int run_evaluate(const Word2VecArgs& a) {
  const VectorIndex index(read_word2vec(a.vectors));
  const AnalogyReport r = evaluate_analogies(index, a.analogies, 30000);
  if (!r.malformed_lines.empty()) {
    std::string lines;
    for (size_t i = 0; i < r.malformed_lines.size() && i < 20; ++i)
      lines += (i ? ", " : "") + std::to_string(r.malformed_lines[i]);
    if (r.malformed_lines.size() > 20) lines += ", ...";
    std::fprintf(stderr, "%s: skipped %zu malformed line(s) (not 4 words): line %s\n", a.analogies.c_str(),
                 r.malformed_lines.size(), lines.c_str());
  }
  if (a.json) {
    auto section = [](const AnalogySection& s) {
      return nlohmann::json{{"section", s.name}, {"correct", s.correct}, {"incorrect", s.incorrect},
                            {"skipped", s.skipped}, {"accuracy", s.accuracy()}};
    };
    nlohmann::json j{{"total", section(r.total)}, {"coverage", r.coverage()}, {"malformed_lines", r.malformed_lines},
                     {"sections", nlohmann::json::array()}};
    for (const auto& s : r.sections) j["sections"].push_back(section(s));
    std::printf("%s\n", j.dump(1).c_str());
    return 0;
  }
  std::printf("%-32s %9s %8s %8s\n", "section", "accuracy", "correct", "asked");
  for (const auto& s : r.sections)
    std::printf("%-32s %8.2f%% %8ld %8ld\n", s.name.c_str(), 100 * s.accuracy(), s.correct, s.correct + s.incorrect);
  std::printf("%-32s %8.2f%% %8ld %8ld\n", "total", 100 * r.total.accuracy(), r.total.correct,
              r.total.correct + r.total.incorrect);
  std::printf("coverage %.2f%% (%ld of %ld questions have all 4 words among the 30000 most frequent)\n",
              100 * r.coverage(), r.total.correct + r.total.incorrect,
              r.total.correct + r.total.incorrect + r.total.skipped);
  return 0;
}

}  // namespace

Run add_word2vec(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("word2vec", "word vectors: train (CBOW, skip-gram), similar words, analogies");
  cmd->require_subcommand(1);
  auto a = std::make_shared<Word2VecArgs>();
  a->train.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  auto corpus_flags = [a](CLI::App* c) {
    add_choice(c, "--split", choice(a->corpus.split, {{WordSplit::kIcu, "icu"}, {WordSplit::kSpace, "space"}}),
               "what a word is: icu (the word tokenizer's ICU word boundaries, letters/digits only) or space "
               "(whitespace, as word2vec.c and gensim)");
    c->add_flag("--lowercase", a->corpus.lowercase, "lowercase the text first");
  };

  CLI::App* train = cmd->add_subcommand("train", "learn word vectors from a text (word2vec.c's flags)");
  train->add_option("--data", a->data, "UTF-8 text; each line a sentence")->required();
  train->add_option("--out", a->out, "directory for vectors.txt, vectors.bin, vectors.safetensors, vocab.json (new, "
                                     "empty, or an earlier run's with --force)")
      ->required();
  train->add_flag("--force", a->force, "replace the word vectors an earlier run wrote in --out");
  add_choice(train, "--model", choice(a->train.model, {{Word2VecModel::kCbow, "cbow"}, {Word2VecModel::kSkipgram, "skipgram"}}),
             "cbow or skipgram");
  train->add_option("--dim", a->train.dim, "vector size")->capture_default_str();
  train->add_option("--window", a->train.window, "largest distance to a context word")->capture_default_str();
  train->add_option("--negative", a->train.negative, "negative samples per example")->capture_default_str();
  train->add_option("--sample", a->train.sample, "subsampling threshold of frequent words (0: off)")
      ->capture_default_str();
  train->add_option("--min-count", a->corpus.min_count, "drop words seen fewer times")->capture_default_str();
  train->add_option("--epochs", a->train.epochs, "passes over the text")->capture_default_str();
  train->add_option("--alpha", a->train.alpha, "starting learning rate (falls linearly to alpha*1e-4)")
      ->capture_default_str();
  train->add_option("--threads", a->train.threads, "Hogwild threads (default: all cores)");
  add_seed(train, "--seed", a->train.seed, "random seed");
  corpus_flags(train);

  CLI::App* split = cmd->add_subcommand("split", "write a text as its words, space-separated, one line per line "
                                                 "(to feed gensim or fastText the same words)");
  split->add_option("--data", a->data, "UTF-8 text")->required();
  split->add_option("--out", a->out, "file to write")->required();
  add_output_force(split, a->force, "--out");
  corpus_flags(split);

  CLI::App* similar = cmd->add_subcommand("similar", "the words nearest a word (cosine)");
  similar->add_option("--vectors", a->vectors, "word2vec directory, or a vectors .bin/.txt file")->required();
  similar->add_option("--word", a->word, "the word")->required();
  similar->add_option("-k", a->k, "how many")->capture_default_str();

  CLI::App* analogy = cmd->add_subcommand("analogy", "a is to b as c is to ? (3CosAdd)");
  analogy->add_option("--vectors", a->vectors, "word2vec directory, or a vectors .bin/.txt file")->required();
  analogy->add_option("words", a->words, "a b c")->required()->expected(3);
  analogy->add_option("-k", a->k, "how many")->capture_default_str();

  CLI::App* evaluate = cmd->add_subcommand("evaluate", "analogy accuracy per section and coverage (gensim's "
                                                       "evaluate_word_analogies, 30000 words, case-insensitive)");
  evaluate->add_option("--vectors", a->vectors, "word2vec directory, or a vectors .bin/.txt file")->required();
  evaluate->add_option("--analogies", a->analogies, "questions-words.txt format; malformed lines are skipped "
                                                    "and reported")->required();
  evaluate->add_flag("--json", a->json, "print the report as JSON");

  return [a, train, split, similar, analogy, evaluate]() {
    if (train->parsed()) return run_train(*a);
    if (split->parsed()) return run_split(*a);
    if (similar->parsed()) return run_similar(*a);
    if (analogy->parsed()) return run_analogy(*a);
    if (evaluate->parsed()) return run_evaluate(*a);
    return 1;
  };
}

}  // namespace potop::cli
