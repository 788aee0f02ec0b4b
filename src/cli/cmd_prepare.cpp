// `potop prepare`: tokenize a corpus once into a data directory of binary shards that training
// memory-maps (docs/data.md).

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "core/stop_signals.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/threads.h"
#include "data/prepare.h"
#include "core/progress_line.h"

namespace potop::cli {

namespace {



std::string megabytes(double bytes) {
  char buf[32];
  if (bytes >= 1e9) std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  else std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  return buf;
}

std::string millions(double n) {
  char buf[32];
  if (n >= 1e6) std::snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
  else std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

// "tokenize 1.20 GB/2.05 GB (58%) | 84.2 MB/s | 1180.3M tokens | file 12/32 | ETA 10s" (the
// first pass, when prepare builds a char tokenizer, is "vocabulary ..."): on a terminal the line
// rewrites itself, like potop train's; otherwise (a log) one line every 5 s. Each pass has its
// own rate and ETA.
class PassProgress {
 public:
  explicit PassProgress(std::FILE* out) : line_(out), start_(Clock::now()) {}

  void update(const PrepareProgress& p, bool last = false) {
    const auto now = Clock::now();
    if (phase_ != p.phase) {  // the previous pass is done: its last line says how long it took
      if (!phase_.empty()) print(previous_, true, now);
      finish();
      phase_ = p.phase;
      phase_start_ = now;
    }
    previous_ = p;
    previous_.phase = phase_.c_str();
    if (!last && !line_.due(0.25, 5.0)) return;
    print(p, last, now);
  }
  void finish() { line_.finish(); }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;

  void print(const PrepareProgress& p, bool last, Clock::time_point now) {
    const double elapsed = std::chrono::duration<double>(now - phase_start_).count();
    const double rate = elapsed > 0 ? static_cast<double>(p.bytes_done) / elapsed : 0;
    const double left = p.bytes_total > p.bytes_done ? static_cast<double>(p.bytes_total - p.bytes_done) : 0;
    const int percent = p.bytes_total ? static_cast<int>(100.0 * static_cast<double>(std::min(p.bytes_done, p.bytes_total)) /
                                                         static_cast<double>(p.bytes_total))
                                      : 100;
    char text[256];
    std::snprintf(text, sizeof text, "%s %s/%s (%d%%) | %.1f MB/s | %s tokens | file %zu/%zu | %s %s", p.phase,
                  megabytes(static_cast<double>(p.bytes_done)).c_str(),
                  megabytes(static_cast<double>(p.bytes_total)).c_str(), percent, rate / 1e6,
                  millions(static_cast<double>(p.tokens)).c_str(), p.files_done, p.files_total, last ? "took" : "ETA",
                  ProgressLine::format_duration(last ? elapsed : rate > 0 ? left / rate : 0).c_str());
    line_.show(text);
  }

  ProgressLine line_;
  std::string phase_;
  PrepareProgress previous_;  // the last update of the pass under way
  Clock::time_point start_, phase_start_;
};

struct PrepareArgs {
  PrepareOptions options;
  std::string data, tokenizer, out;
  int threads = 0;
  bool json = false;
};

}  // namespace

Run add_prepare(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "prepare", "tokenize a text file or a directory of them once, into binary shards that training memory-maps");
  auto a = std::make_shared<PrepareArgs>();
  PrepareOptions& o = a->options;
  cmd->add_option("--data", a->data, "UTF-8 text file, or a directory: every file under it but hidden ones (sorted)")
      ->required();
  cmd->add_option("--tokenizer", a->tokenizer,
                  "tokenizer directory (tokenizer.json, or a model directory); default: a char tokenizer of the "
                  "corpus, as potop train builds from a text");
  cmd->add_option("--out", a->out, "data directory to write (data.json and the shards)")->required();
  cmd->add_option("--val-fraction", o.val_fraction, "share held out for validation, in [0, 1)")->capture_default_str();
  add_choice(cmd, "--split", split_by_choice(o.split),
             "tail: the last --val-fraction of the tokens, as potop train does with a text; documents: every k-th "
             "file (k = 1 / --val-fraction) goes to validation");
  add_choice(cmd, "--unknown", unknown_choice(o.unknown),
             "text the tokenizer cannot express: error (refuse the corpus), skip it, or replace it");
  cmd->add_option("--threads", a->threads, "threads that encode; 0 = all cores")->capture_default_str();
  cmd->add_option("--chunk-bytes", o.chunk_bytes, "text encoded at once by one thread (chunks end at a line end)")
      ->capture_default_str();
  cmd->add_option("--shard-tokens", o.shard_tokens, "tokens per shard file; 0 = 256 MiB of ids")->capture_default_str();
  cmd->add_flag("--force", o.force, "replace the data directory at --out");
  cmd->add_flag("--json", a->json, "print a summary as one JSON object on stdout");
  return [a]() {
    PrepareOptions& options = a->options;
    options.data = a->data;
    options.out = a->out;
    apply_threads_flag(a->threads);
    const std::unique_ptr<Tokenizer> tokenizer = a->tokenizer.empty() ? nullptr : load_tokenizer_dir(a->tokenizer);
    // The first SIGINT or SIGTERM stops after the round under way and removes what was written;
    // a second one ends the process at once (core/stop_signals.h).
    stop_on_signal();
    // A file-size limit (ulimit -f) makes a write fail with a message instead of killing us.
    signal(SIGXFSZ, SIG_IGN);
    PassProgress line(stderr);
    PrepareProgress last;
    const PrepareResult r = prepare_data(
        options, tokenizer.get(),
        [&](const PrepareProgress& p) {
          last = p;
          line.update(p);
        },
        [] { return stop_signal_received() != 0; });
    line.update(last, /*last=*/true);
    line.finish();
    const double seconds = line.seconds();
    const DataManifest& m = r.manifest;
    std::fprintf(stderr, "prepared %s: %zu file%s, %s, %llu characters -> %llu tokens (%s), train %llu / val %llu, %zu shard%s\n",
                 r.out.string().c_str(), m.files.size(), m.files.size() == 1 ? "" : "s", megabytes(double(m.bytes)).c_str(),
                 (unsigned long long)m.characters, (unsigned long long)m.tokens, to_string(m.ids).c_str(),
                 (unsigned long long)m.train.tokens, (unsigned long long)m.val.tokens, m.shards.size(),
                 m.shards.size() == 1 ? "" : "s");
    for (const auto& [path, bytes] : r.removed_partials)
      std::fprintf(stderr, "note: removed %s (%.1f MB), left by a prepare that was killed\n", path.string().c_str(),
                   double(bytes) / 1e6);
    if (r.replaced) std::fprintf(stderr, "note: --force: the data directory that was in %s is replaced\n", r.out.string().c_str());
    if (r.skipped_empty + r.skipped_hidden + r.skipped_special > 0)
      std::fprintf(stderr, "note: %s: left out %zu empty file(s), %zu hidden entr%s, %zu entr%s that are not regular files\n",
                   a->data.c_str(), r.skipped_empty, r.skipped_hidden, r.skipped_hidden == 1 ? "y" : "ies",
                   r.skipped_special, r.skipped_special == 1 ? "y" : "ies");
    if (r.unknown.count > 0)
      std::fprintf(stderr, "note: %s %s (--unknown), the first in %s\n", r.unknown.describe().c_str(),
                   options.unknown == Unknown::kSkip ? "left out" : "replaced", r.unknown_file.c_str());
    if (a->json) {
      const nlohmann::json summary = {
          {"out", r.out.string()},
          {"files", m.files.size()},
          {"bytes", m.bytes},
          {"characters", m.characters},
          {"tokens", m.tokens},
          {"train_tokens", m.train.tokens},
          {"val_tokens", m.val.tokens},
          {"train_documents", m.train.documents},
          {"val_documents", m.val.documents},
          {"shards", m.shards.size()},
          {"ids", to_string(m.ids)},
          {"split", to_string(m.split_by)},
          {"val_fraction", m.val_fraction},
          {"tokenizer", {{"kind", m.tokenizer_kind}, {"size", m.vocab_size}, {"hash", hash_hex(m.tokenizer_hash)}}},
          {"unknown", r.unknown.count},
          {"replaced", r.replaced},
          {"threads", get_threads()},
          {"seconds", seconds},
          {"mb_per_s", seconds > 0 ? double(m.bytes) / 1e6 / seconds : 0.0}};
      std::printf("%s\n", summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    }
    return 0;
  };
}

}  // namespace potop::cli
