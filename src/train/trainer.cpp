#include "train/trainer.h"

#include <cmath>
#include <limits>

#include "checkpoint/model_dir.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/threads.h"
#include "data/dataset.h"
#include "data/text_file.h"
#include "kernels/gemm.h"
#include "train/adamw.h"
#include "train/progress.h"
#include "train/schedule.h"

namespace potop {

namespace {

// Mean loss over `iters` batches drawn with a fixed seed, so every evaluation of a run scores
// the same windows and the curve shows the model changing, not the sample.
float estimate_loss(GPT& model, std::span<const int> tokens, int B, int T, int iters, uint64_t seed,
                    std::vector<int>& x, std::vector<int>& y) {
  BatchSampler sampler(tokens, B, T, seed);
  double sum = 0;
  for (int i = 0; i < iters; ++i) {
    sampler.next(x.data(), y.data());
    sum += model.forward(x.data(), y.data(), B, T, /*training=*/false);
  }
  return static_cast<float>(sum / iters);
}

void print_memory_plan(std::FILE* log, const GPT& model, const AdamW& optimizer) {
  size_t total = optimizer.bytes();
  std::fprintf(log, "memory plan:\n");
  for (const auto& [name, bytes] : model.memory_plan()) {
    std::fprintf(log, "  %-26s %12s\n", name.c_str(), format_bytes(bytes).c_str());
    total += bytes;
  }
  std::fprintf(log, "  %-26s %12s\n", "AdamW moments (m, v)", format_bytes(optimizer.bytes()).c_str());
  std::fprintf(log, "  %-26s %12s\n", "total", format_bytes(total).c_str());
}

}  // namespace

TrainResult train(const TrainOptions& options, std::FILE* log) {
  validate(options);
  set_threads(options.threads > 0 ? options.threads : hardware_threads());
  const fs::path out = options.out;

  // Data: text -> code points -> ids -> train/val split.
  const std::u32string text = read_utf8_file(options.data);
  const CharTokenizer tokenizer = CharTokenizer::from_text(text);
  const std::vector<int> tokens = tokenizer.encode(text, options.data);
  const TokenSplit split = split_tokens(tokens, options.val_fraction, options.block_size, options.data);
  const bool has_val = !split.val.empty();
  ensure_writable_directory(out);

  const GPTConfig config = options.model_config(tokenizer.size());
  config.validate("model");
  GPT model(config);
  model.init_weights(options.seed);
  const int B = options.batch_size, T = options.block_size;
  model.reserve(B, T);
  model.grads();
  AdamW optimizer(model.layout(), {options.lr, options.beta1, options.beta2, 1e-8f, options.weight_decay});

  std::fprintf(log, "data: %s: %zu characters, vocabulary %d, train %zu / val %zu tokens\n", options.data.c_str(),
               text.size(), tokenizer.size(), split.train.size(), split.val.size());
  std::fprintf(log, "model: %d layers, %d heads, %d wide, block %d, %s-LN, %s, %s positions: %zu parameters\n",
               config.n_layer, config.n_head, config.n_embd, config.block_size, to_string(config.norm).c_str(),
               to_string(config.activation).c_str(), to_string(config.positions).c_str(), model.num_parameters());
  std::fprintf(log, "threads: %d, GEMM: %s\n", get_threads(), blas_name());
  print_memory_plan(log, model, optimizer);

  save_model_files(out, config, tokenizer, to_json(options));
  MetricsLog metrics((out / "metrics.jsonl").string());
  const LRSchedule schedule{options.lr, options.min_lr, options.warmup, options.steps};
  BatchSampler sampler(split.train, B, T, hash64(options.seed, 1));
  const uint64_t eval_seed = hash64(options.seed, 2), dropout_seed = hash64(options.seed, 3);
  std::vector<int> x(size_t(B) * T), y(size_t(B) * T);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  TrainResult result{nan, nan, std::numeric_limits<float>::infinity(), 0, 0};
  Progress progress(options.steps, log);
  float loss = nan;

  for (int step = 0;; ++step) {
    const bool last = step == options.steps;
    if (step % options.eval_interval == 0 || last) {
      const float train_loss = estimate_loss(model, split.train, B, T, options.eval_iters, eval_seed, x, y);
      const float val_loss =
          has_val ? estimate_loss(model, split.val, B, T, options.eval_iters, eval_seed, x, y) : nan;
      progress.finish_line();
      std::fprintf(log, "eval step %d: train loss %.4f, val loss %.4f\n", step, train_loss, val_loss);
      metrics.write({{"kind", "eval"}, {"step", step}, {"train_loss", train_loss},
                     {"val_loss", has_val ? nlohmann::json(val_loss) : nlohmann::json(nullptr)},
                     {"elapsed_s", progress.elapsed_seconds()}});
      Metadata meta{{"step", std::to_string(step)}, {"train_loss", std::to_string(train_loss)},
                    {"val_loss", std::to_string(val_loss)}};
      save_weights(out / "latest.safetensors", model, tokenizer, meta);
      const float score = has_val ? val_loss : train_loss;
      if (score < result.best_val_loss) {
        result.best_val_loss = score;
        save_weights(out / "best.safetensors", model, tokenizer, meta);
      }
      result.final_train_loss = train_loss, result.final_val_loss = val_loss;
    }
    if (last) break;

    const float lr = schedule.at(step);
    model.zero_grad();
    double step_loss = 0;
    for (int micro = 0; micro < options.grad_accum; ++micro) {
      sampler.next(x.data(), y.data());
      const uint64_t seed = hash64(dropout_seed, uint64_t(step) * options.grad_accum + micro);
      step_loss += model.forward(x.data(), y.data(), B, T, /*training=*/true, seed);
      model.backward(1.0f / options.grad_accum);
    }
    loss = static_cast<float>(step_loss / options.grad_accum);
    const double grad_norm = options.grad_clip > 0
                                 ? clip_grad_norm(model.grads().data(), model.grads().floats(), options.grad_clip)
                                 : global_norm(model.grads().data(), model.grads().floats());
    optimizer.step(model, lr);
    progress.update(step + 1, loss, lr, long(B) * T * options.grad_accum);
    if ((step + 1) % options.log_interval == 0 || step + 1 == options.steps) {
      metrics.write({{"kind", "train"}, {"step", step + 1}, {"loss", loss}, {"lr", lr}, {"grad_norm", grad_norm},
                     {"tokens_per_s", progress.tokens_per_second()}, {"elapsed_s", progress.elapsed_seconds()}});
    }
  }
  progress.finish_line();
  result.tokens_per_second = progress.tokens_per_second();
  result.seconds = progress.elapsed_seconds();
  std::fprintf(log, "done in %s; model saved to %s\n", Progress::format_duration(result.seconds).c_str(),
               out.string().c_str());
  return result;
}

}  // namespace potop
