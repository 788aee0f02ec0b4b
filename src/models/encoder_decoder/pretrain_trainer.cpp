#include "models/encoder_decoder/pretrain_trainer.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/hash.h"
#include "data/text_file.h"
#include "models/encoder_decoder/encoder_decoder_training.h"
#include "models/encoder_decoder/span_batches.h"
#include "models/encoder_decoder/translation_model.h"

namespace potop {

namespace {

// The text of every --data file: its lines' tokens, the files in order.
struct PretrainText {
  std::vector<std::vector<int>> lines;
  std::vector<long> file_tokens;
  uint64_t hash = kFnv1a64Offset;
};

PretrainText read_text(const PretrainOptions& options, const Tokenizer& tokenizer) {
  PretrainText t;
  for (const std::string& file : options.data_files()) {
    const std::string text = read_utf8_text(file);  // missing, empty, binary, bad UTF-8: an Error naming it
    t.hash = fnv1a64(text, fnv1a64("\x1e", t.hash));  // the files' texts, in order, apart
    long tokens = 0;
    size_t start = 0;
    for (int n = 1; start < text.size(); ++n) {
      const size_t end = std::min(text.find('\n', start), text.size());
      std::string_view line(text.data() + start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.find_first_not_of(" \t") != std::string_view::npos) {
        t.lines.push_back(tokenizer.encode(line, file + ":" + std::to_string(n), Unknown::kReplace, nullptr));
        tokens += long(t.lines.back().size());
      }
      start = end + 1;
    }
    if (tokens == 0) throw Error("--data " + file + ": no text (only blank lines)");
    t.file_tokens.push_back(tokens);
  }
  return t;
}

// Held-out chunks: a fixed shuffle (whatever the seed) picks them from every file alike.
void split_chunks(std::vector<std::vector<int>> chunks, int dev_size, std::vector<std::vector<int>>& train,
                  std::vector<std::vector<int>>& dev) {
  if (chunks.size() < 2)
    throw Error("--data: " + std::to_string(chunks.size()) + " chunk of text; at least 2 are needed (training and "
                "held-out)");
  std::vector<size_t> order(chunks.size());
  std::iota(order.begin(), order.end(), size_t(0));
  Rng(1).shuffle(order);
  const size_t n_dev = std::min(size_t(dev_size), chunks.size() / 2);  // at least half trains
  std::vector<size_t> dev_ids(order.begin(), order.begin() + long(n_dev));
  std::sort(dev_ids.begin(), dev_ids.end());
  std::vector<char> held(chunks.size(), 0);
  for (size_t i : dev_ids) held[i] = 1, dev.push_back(std::move(chunks[i]));
  for (size_t i = 0; i < chunks.size(); ++i)
    if (!held[i]) train.push_back(std::move(chunks[i]));
}

}  // namespace

RunResult pretrain_encoder_decoder(const PretrainOptions& requested, std::FILE* log, const RunControl& control) {
  RunKit kit(control, kEncoderDecoderKind, "potop translate pretrain", log);
  kit.refuse_on_resume({{"--tokenizer", control.was_given("tokenizer")}}, "tokenizer");
  const PretrainOptions options = kit.resume(requested);
  validate(options);
  kit.start(options);
  const std::unique_ptr<Tokenizer> tokenizer =
      kit.resuming() ? kit.resumed_tokenizer() : subword_tokenizer(options.tokenizer);
  const PretrainText text = read_text(options, *tokenizer);
  std::string names;
  for (const std::string& f : options.data_files()) names += (names.empty() ? "" : ", ") + f;
  kit.check_data(text.hash, names, "text");
  std::vector<std::vector<int>> train_chunks, dev_chunks;
  split_chunks(pack_chunks(text.lines, options.chunk_length()), options.dev_size, train_chunks, dev_chunks);

  const int sentinels = sentinels_of_run(kit, max_sentinels(options.chunk_length(), options.corruption));
  const EncoderDecoderConfig config = run_config(kit, options.model, *tokenizer, sentinels);
  const int B = options.batch_size, S = config.block_size;
  EncoderDecoder& model = build_encoder_decoder(kit, config, {B, S, S}, options.seed, nullptr);
  const int first_sentinel = tokenizer->size();
  SpanBatches batches(train_chunks, B, options.corruption, first_sentinel, hash64(options.seed, 1));
  SpanBatches dev_batches(dev_chunks, B, options.corruption, first_sentinel, hash64(options.seed, 2));

  long tokens = 0;
  for (long n : text.file_tokens) tokens += n;
  std::fprintf(log, "data: %s: %zu lines, %ld tokens; %zu chunks of up to %d tokens: train %zu, held out %zu\n",
               names.c_str(), text.lines.size(), tokens, train_chunks.size() + dev_chunks.size(),
               options.chunk_length(), train_chunks.size(), dev_chunks.size());
  std::fprintf(log, "span corruption: %g of the tokens in spans of %g on average; sentinels %d..%d (%d)\n",
               options.corruption.noise_density, options.corruption.mean_span, first_sentinel,
               first_sentinel + sentinels - 1, sentinels);
  std::fprintf(log, "tokenizer: %s, %d tokens + %d sentinels; %d batches of %d chunks per epoch\n",
               tokenizer->kind().c_str(), tokenizer->size(), sentinels, batches.size(), B);
  log_model(log, config, model);

  ModelJob job = encoder_decoder_job(
      config, [&](long k, Batch& b) { batches.fill(k, b); }, batches.target_tokens_per_batch(),
      std::to_string(B) + " chunks of up to " + std::to_string(options.chunk_length()) + " tokens", options.seed,
      [&](const nlohmann::json& saved) { save_translation_files(options.out, config, *tokenizer, kSpanSource, kSpanTarget, saved); });
  job.evaluate = [&](int, const std::function<bool()>& stop) -> std::optional<Evaluation> {
    const int n = std::min({options.eval_iters, batches.size(), dev_batches.size()});
    const std::optional<float> train_loss =
        mean_batch_loss(kit.parallel(), n, [&](int i, Batch& b) { batches.fill_fixed(i, n, b); }, stop);
    if (!train_loss) return std::nullopt;
    const std::optional<float> dev_loss =
        mean_batch_loss(kit.parallel(), n, [&](int i, Batch& b) { dev_batches.fill_fixed(i, n, b); }, stop);
    if (!dev_loss) return std::nullopt;
    return Evaluation{*train_loss, *dev_loss, {}};
  };
  return kit.run(job, *tokenizer, to_json(config), to_json(options), text.hash);
}

}  // namespace potop
