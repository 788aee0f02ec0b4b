#include "models/bert/masked_batches.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/bert/bert.h"
#include "tokenizer/tokenizer.h"
#include "core/error.h"
#include "train/evaluate.h"

namespace potop {

Batch MaskedRows::fill(const int* windows, const int* window_lengths, int B, int T, const MaskingRule& rule, Rng& rng) {
  const int W = T - 2;
  tokens.assign(size_t(B) * T, rule.pad_id);
  targets.assign(size_t(B) * T, -1);
  lengths.resize(size_t(B));
  for (int b = 0; b < B; ++b) {
    const int n = window_lengths ? window_lengths[b] : W;
    POTOP_CHECK(n >= 1 && n <= W, "MaskedRows: a window of no token, or longer than T - 2");
    int* row = tokens.data() + size_t(b) * T;
    row[0] = rule.cls_id;
    std::copy_n(windows + size_t(b) * W, n, row + 1);
    row[n + 1] = rule.sep_id;
    lengths[size_t(b)] = n + 2;
    mask_tokens({row, size_t(T)}, {targets.data() + size_t(b) * T, size_t(T)}, 1, n + 1, rule, rng);
  }
  Batch batch{{B, T}, tokens.data(), targets.data()};
  batch.lengths = lengths.data();
  return batch;
}

void MaskedLMScore::add(BatchParallel& parallel, const Batch& batch) {
  const float mean = parallel.forward(batch, {/*training=*/false, 0});
  loss_sum += double(mean) * parallel.counted_targets();
  masked += parallel.counted_targets();
  parallel.for_each_last_shard([&](Model& replica, int first_row, int) {
    const auto& bert = dynamic_cast<const Bert&>(replica);
    const int V = bert.config().vocab_size;
    const std::vector<int>& rows = bert.masked_rows();
    const float* logits = bert.logits();
    for (size_t m = 0; m < rows.size(); ++m) {
      const float* l = logits + m * V;
      const int guess = int(std::max_element(l, l + V) - l);
      correct += guess == batch.targets[size_t(first_row) * batch.T + size_t(rows[m])];
    }
  });
}

MaskedBatches::MaskedBatches(const RunKit& kit, TokenView train, TokenView val, int B, int T, const RunOptions& options,
                             const MaskingRule& rule)
    : train_(train), val_(val), B_(B), T_(T), eval_iters_(options.eval_iters), mask_seed_(hash64(options.seed, 3)),
      eval_seed_(hash64(options.seed, 2)), rule_(rule), sampler_(train, B, T - 2, hash64(options.seed, 1)),
      window_(size_t(B) * (T - 2)), unused_(window_.size()) {
  if (kit.resuming()) sampler_.set_state(kit.state().sampler);
}

bool MaskedBatches::score(BatchParallel& parallel, TokenView tokens, MaskedLMScore& s,
                          const std::function<bool()>& stop) {
  BatchSampler sampler(tokens, B_, T_ - 2, eval_seed_);
  for (int i = 0; i < eval_iters_; ++i) {
    if (stop()) return false;
    sampler.next(window_.data(), unused_.data());
    Rng rng(hash64(eval_seed_, uint64_t(i)));
    s.add(parallel, rows_.fill(window_.data(), nullptr, B_, T_, rule_, rng));
  }
  return true;
}

void MaskedBatches::fill(ModelJob& job, BatchParallel& parallel) {
  job.next_batch = [this](long index) {
    sampler_.next(window_.data(), unused_.data());
    Rng rng(hash64(mask_seed_, uint64_t(index)));  // a new mask each time: dynamic masking
    return rows_.fill(window_.data(), nullptr, B_, T_, rule_, rng);
  };
  job.skip_batch = [this] { sampler_.skip(); };
  job.sampler_state = [this] { return sampler_.state(); };
  job.tokens_per_batch = long(B_) * T_;
  job.batch_text = std::to_string(B_) + " rows of " + std::to_string(T_) + " tokens, " +
                   std::to_string(masked_count(rule_, T_ - 2)) + " masked per row";
  job.evaluate = [this, &parallel](int, const std::function<bool()>& stop) -> std::optional<Evaluation> {
    MaskedLMScore train, val;
    if (!score(parallel, train_, train, stop)) return std::nullopt;
    Evaluation e{float(train.loss()), std::numeric_limits<float>::quiet_NaN()};
    if (val_.empty()) return e;
    if (!score(parallel, val_, val, stop)) return std::nullopt;
    e.val_loss = float(val.loss());
    e.extra.push_back({"mlm_accuracy", val.accuracy()});
    return e;
  };
}

}  // namespace potop
