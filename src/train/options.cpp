#include "train/options.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/threads.h"

namespace potop {

std::string OptionField::json_key() const {
  std::string key = name;
  for (char& c : key) c = c == '-' ? '_' : c;
  return key;
}

std::vector<OptionField> option_fields(TrainOptions& o) {
  return {
      {"data", "training text file (UTF-8)", &o.data},
      {"out", "model directory to write (created if missing)", &o.out},
      {"val-fraction", "fraction of the text, taken from its end, held out for validation", &o.val_fraction},
      {"n-layer", "number of Transformer blocks", &o.n_layer},
      {"n-head", "attention heads per block", &o.n_head},
      {"n-embd", "embedding width C (divisible by n-head)", &o.n_embd},
      {"block-size", "context length T in characters", &o.block_size},
      {"dropout", "dropout probability in [0, 1)", &o.dropout},
      {"bias", "biases in linear layers and LayerNorms", &o.bias},
      {"norm", "LayerNorm placement: pre (GPT-2) or post (the original Add & Norm)", &o.norm},
      {"activation", "feed-forward non-linearity: gelu or relu", &o.activation},
      {"positions", "position encoding: learned or sinusoidal", &o.positions},
      {"batch-size", "sequences per micro-batch", &o.batch_size},
      {"grad-accum", "micro-batches per optimizer step", &o.grad_accum},
      {"steps", "optimizer steps", &o.steps},
      {"lr", "peak learning rate", &o.lr},
      {"min-lr", "learning rate at the end of the cosine decay", &o.min_lr},
      {"warmup", "linear warm-up steps", &o.warmup},
      {"beta1", "AdamW beta1", &o.beta1},
      {"beta2", "AdamW beta2", &o.beta2},
      {"weight-decay", "AdamW weight decay (matrices and embeddings only)", &o.weight_decay},
      {"grad-clip", "clip the global gradient norm to this (0 = off)", &o.grad_clip},
      {"eval-interval", "evaluate and checkpoint every N steps", &o.eval_interval},
      {"eval-iters", "batches per split in each evaluation", &o.eval_iters},
      {"log-interval", "steps between progress lines and metrics records", &o.log_interval},
      {"seed", "random seed (weights, batches, dropout)", &o.seed},
      {"threads", "threads to use (0 = all cores)", &o.threads},
      {"parallel", "how threads share a step: batch (each runs the model on its rows of the batch) or kernel "
                   "(all run each kernel)", &o.parallel},
      {"profile", "print a per-kernel breakdown of the step time at the end", &o.profile},
      {"keep", "also keep a resumable checkpoint every N steps, step-<N>.safetensors (0 = none)", &o.keep},
      {"skip-nonfinite", "skip a step whose loss or gradient norm is NaN or infinite instead of stopping",
       &o.skip_nonfinite},
  };
}

GPTConfig TrainOptions::model_config(int vocab_size) const {
  GPTConfig c;
  c.vocab_size = vocab_size;
  c.block_size = block_size, c.n_layer = n_layer, c.n_head = n_head, c.n_embd = n_embd;
  c.dropout = dropout, c.bias = bias;
  c.norm = parse_norm(norm, "--norm");
  c.activation = parse_activation(activation, "--activation");
  c.positions = parse_positions(positions, "--positions");
  return c;
}

std::vector<std::string> apply_config_file(TrainOptions& options, const std::string& path,
                                           const std::vector<std::string>& skip) {
  const nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(path + ": expected a JSON object of training options");
  return apply_options_json(options, j, path, skip);
}

std::vector<std::string> apply_options_json(TrainOptions& options, const nlohmann::json& j, const std::string& path,
                                            const std::vector<std::string>& skip) {
  if (!j.is_object()) throw Error(path + ": expected a JSON object of training options");
  std::vector<std::string> applied;
  auto fields = option_fields(options);
  for (const auto& item : j.items()) {
    // Named references, not a structured binding: lambdas cannot capture those before clang 16.
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    auto it = std::find_if(fields.begin(), fields.end(), [&](const OptionField& f) { return f.json_key() == key; });
    if (it == fields.end()) throw Error(path + ": unknown option '" + key + "'");
    if (std::find(skip.begin(), skip.end(), it->name) != skip.end()) continue;
    const std::string where = path + ": " + key;
    std::visit(
        [&](auto* target) {
          using T = std::remove_pointer_t<decltype(target)>;
          bool ok;
          if constexpr (std::is_same_v<T, bool>) ok = value.is_boolean();
          else if constexpr (std::is_same_v<T, std::string>) ok = value.is_string();
          else if constexpr (std::is_integral_v<T>) {
            // In range of T: a value that does not fit must not wrap around.
            ok = (value.is_number_unsigned() && value.template get<uint64_t>() <= uint64_t(std::numeric_limits<T>::max())) ||
                 (value.is_number_integer() && !value.is_number_unsigned() &&
                  value.template get<int64_t>() >= int64_t(std::numeric_limits<T>::min()) &&
                  (std::is_unsigned_v<T> || value.template get<int64_t>() <= int64_t(std::numeric_limits<T>::max())));
          } else ok = value.is_number();
          if (!ok) throw Error(where + " has the wrong type or is out of range (got " + value.dump() + ")");
          *target = value.template get<T>();
        },
        it->target);
    applied.push_back(it->name);
  }
  return applied;
}

nlohmann::json to_json(const TrainOptions& options) {
  TrainOptions copy = options;
  nlohmann::json j = nlohmann::json::object();
  for (const OptionField& f : option_fields(copy)) std::visit([&](auto* t) { j[f.json_key()] = *t; }, f.target);
  return j;
}

namespace {

void require(bool ok, const std::string& flag, const std::string& what) {
  if (!ok) throw Error("--" + flag + " " + what);
}
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

void validate(const TrainOptions& o) {
  require(!o.data.empty(), "data", "is required (a UTF-8 text file to train on)");
  require(!o.out.empty(), "out", "must name a directory");
  require(std::isfinite(o.val_fraction) && o.val_fraction >= 0 && o.val_fraction < 1, "val-fraction",
          "must be in [0, 1) (got " + num(o.val_fraction) + ")");
  for (auto [flag, value] : {std::pair{"n-layer", o.n_layer}, {"n-head", o.n_head}, {"n-embd", o.n_embd},
                             {"block-size", o.block_size}, {"batch-size", o.batch_size}, {"grad-accum", o.grad_accum},
                             {"steps", o.steps}, {"eval-interval", o.eval_interval}, {"eval-iters", o.eval_iters},
                             {"log-interval", o.log_interval}})
    require(value > 0, flag, "must be positive (got " + std::to_string(value) + ")");
  require(o.n_embd % o.n_head == 0, "n-embd",
          "(" + std::to_string(o.n_embd) + ") must be divisible by --n-head (" + std::to_string(o.n_head) + ")");
  require(o.block_size <= 65536, "block-size", "is too large (max 65536)");
  require(o.n_embd <= 65536, "n-embd", "is too large (max 65536)");
  require(o.warmup >= 0, "warmup", "must be >= 0");
  require(std::isfinite(o.dropout) && o.dropout >= 0 && o.dropout < 1, "dropout", "must be in [0, 1) (got " + num(o.dropout) + ")");
  require(std::isfinite(o.lr) && o.lr > 0, "lr", "must be a positive finite number (got " + num(o.lr) + ")");
  require(std::isfinite(o.min_lr) && o.min_lr >= 0 && o.min_lr <= o.lr, "min-lr",
          "must be finite, >= 0 and <= --lr (got " + num(o.min_lr) + ")");
  require(std::isfinite(o.beta1) && o.beta1 >= 0 && o.beta1 < 1, "beta1", "must be in [0, 1)");
  require(std::isfinite(o.beta2) && o.beta2 >= 0 && o.beta2 < 1, "beta2", "must be in [0, 1)");
  require(std::isfinite(o.weight_decay) && o.weight_decay >= 0, "weight-decay", "must be finite and >= 0");
  require(std::isfinite(o.grad_clip) && o.grad_clip >= 0, "grad-clip", "must be finite and >= 0 (0 disables clipping)");
  const int max_threads = 4 * hardware_threads();
  require(o.threads >= 0 && o.threads <= max_threads, "threads",
          "must be between 0 (all cores) and " + std::to_string(max_threads) + " (got " + std::to_string(o.threads) + ")");
  require(o.parallel == "batch" || o.parallel == "kernel", "parallel",
          "must be 'batch' or 'kernel' (got '" + o.parallel + "')");
  require(o.keep >= 0, "keep", "must be >= 0 (got " + std::to_string(o.keep) + "); 0 keeps only latest and best");
  (void)o.model_config(1);  // checks --norm, --activation, --positions
}

}  // namespace potop
