#include "models/encoder_decoder/encoder_decoder_training.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/arena.h"
#include "core/error.h"
#include "train/evaluate.h"

namespace potop {

std::unique_ptr<Tokenizer> subword_tokenizer(const std::string& dir) {
  std::unique_ptr<Tokenizer> tokenizer = load_tokenizer_dir(dir);
  if (tokenizer->kind() != "bpe" && tokenizer->kind() != "unigram")
    throw Error("--tokenizer " + dir + ": a " + tokenizer->kind() + " tokenizer; an encoder-decoder takes a bpe or "
                "unigram one (potop tokenizer train --kind bpe), whose pieces cover any text");
  // Sentences are padded with <pad> 0 and framed by <bos> 1 and <eos> 2 (data/parallel_corpus.h).
  if (tokenizer->specials() != kPotopSpecials)
    throw Error("--tokenizer " + dir + ": its special ids are not potop's (<pad> 0, <bos> 1, <eos> 2, <unk> 3), which "
                "an encoder-decoder frames its sentences with (an imported Llama 2 model's tokenizer has <unk> 0, "
                "<s> 1, </s> 2 and no <pad>); train one with potop tokenizer train --kind bpe");
  return tokenizer;
}

int sentinels_of_run(const RunKit& kit, int fresh) {
  return kit.resuming() ? kit.state().config.value("sentinels", 0) : fresh;
}

EncoderDecoderConfig run_config(const RunKit& kit, EncoderDecoderConfig config, const Tokenizer& tokenizer,
                                int sentinels) {
  config.sentinels = sentinels;
  config.vocab_size = tokenizer.size() + sentinels;
  config.validate("model");
  kit.check_config(config, encoder_decoder_fields);
  return config;
}

EncoderDecoder& build_encoder_decoder(RunKit& kit, const EncoderDecoderConfig& config, const BatchShape& largest,
                                      uint64_t seed, std::unique_ptr<EncoderDecoder> base) {
  return kit.build<EncoderDecoder>(config, largest, [&](EncoderDecoder& m) {
    if (!base) return m.init_weights(seed);
    // Fine-tuning: the base model's weights (the same config, so the same layout).
    const Arena& from = base->parameters().values();
    std::copy_n(from.data(), from.floats(), m.parameters().values().data());
    base.reset();
  });
}

void log_model(std::FILE* log, const EncoderDecoderConfig& config, const EncoderDecoder& model) {
  std::fprintf(log, "model: encoder-decoder, %d+%d layers, %d heads, %d wide, %s-LN, %s, %s positions: %zu parameters\n",
               config.n_layer, config.n_layer, config.n_head, config.n_embd, to_string(config.norm).c_str(),
               to_string(config.activation).c_str(), to_string(config.positions).c_str(), model.num_parameters());
}

std::optional<float> mean_batch_loss(BatchParallel& parallel, int n, const std::function<void(int, Batch&)>& fill,
                                     const std::function<bool()>& stop) {
  int next = 0;
  bool stopped = false;
  const LossTotal loss = evaluate_loss(parallel, [&](Batch& b) {
    if (next == n) return false;
    if (stop()) return !(stopped = true);
    fill(next++, b);
    return true;
  });
  if (stopped) return std::nullopt;
  return static_cast<float>(loss.mean());
}

ModelJob encoder_decoder_job(const EncoderDecoderConfig& config, const std::function<void(long, Batch&)>& fill,
                             long tokens_per_batch, std::string batch_text, uint64_t seed,
                             std::function<void(const nlohmann::json&)> write_model_files) {
  ModelJob job;
  job.next_batch = [fill](long index) {  // batch k is a function of k alone
    Batch b;
    fill(index, b);
    return b;
  };
  job.tokens_per_batch = std::max<long>(1, tokens_per_batch), job.d_model = config.n_embd;
  job.batch_text = std::move(batch_text);
  job.sampler_state = [seed] { return Rng(hash64(seed, 1)).state(); };  // unused: batches are indexed
  job.write_model_files = std::move(write_model_files);
  return job;
}

}  // namespace potop
