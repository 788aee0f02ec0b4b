#include "train/window_batches.h"

#include "core/hash.h"
#include "train/evaluate.h"

namespace potop {

WindowBatches::WindowBatches(const RunKit& kit, TokenView train, TokenView val, int B, int T, const RunOptions& options)
    : train_(train), val_(val), B_(B), T_(T), eval_iters_(options.eval_iters), eval_seed_(hash64(options.seed, 2)),
      sampler_(train, B, T, hash64(options.seed, 1)), x_(size_t(B) * T), y_(size_t(B) * T) {
  if (kit.resuming()) sampler_.set_state(kit.state().sampler);
}

void WindowBatches::fill(ModelJob& job, BatchParallel& parallel) {
  job.next_batch = [this](long) {
    sampler_.next(x_.data(), y_.data());
    return Batch{{B_, T_}, x_.data(), y_.data()};
  };
  job.skip_batch = [this] { sampler_.skip(); };
  job.sampler_state = [this] { return sampler_.state(); };
  job.tokens_per_batch = long(B_) * T_;
  job.evaluate = [this, &parallel](int, const std::function<bool()>& stop) {
    return evaluate_train_val(parallel, train_, val_, B_, T_, eval_iters_, eval_seed_, x_, y_, stop);
  };
}

}  // namespace potop
