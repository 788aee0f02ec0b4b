#include "data/dataset.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "core/error.h"
#include "data/prepared_data.h"

namespace potop {
namespace {

std::string format_fraction(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

TokenSplit split_tokens(std::span<const int> tokens, double val_fraction, int block_size, std::string_view source) {
  if (!(val_fraction >= 0.0 && val_fraction < 1.0))
    throw Error("--val-fraction must be in [0, 1), got " + format_fraction(val_fraction));
  if (block_size < 1) throw Error("--block-size must be at least 1, got " + std::to_string(block_size));
  const size_t n = tokens.size();
  const size_t need = static_cast<size_t>(block_size) + 1;
  const size_t n_val = static_cast<size_t>(std::floor(static_cast<double>(n) * val_fraction));
  const size_t n_train = n - n_val;
  const std::string src(source);
  if (n_train < need)
    throw Error(src + ": the training split has " + std::to_string(n_train) + " tokens (of " + std::to_string(n) +
                "), but one window needs --block-size + 1 = " + std::to_string(need) +
                "; use a longer text, a smaller --block-size or a smaller --val-fraction");
  if (val_fraction > 0 && n_val < need)
    throw Error(src + ": the validation split has " + std::to_string(n_val) + " tokens (--val-fraction " +
                format_fraction(val_fraction) + " of " + std::to_string(n) +
                "), but one window needs --block-size + 1 = " + std::to_string(need) +
                "; use a larger --val-fraction, a smaller --block-size, a longer text, or --val-fraction 0");
  TokenSplit split;
  split.train.assign(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(n_train));
  split.val.assign(tokens.begin() + static_cast<std::ptrdiff_t>(n_train), tokens.end());
  return split;
}

TokenView::TokenView(const PreparedData& data, DataSplit split)
    : data_(&data), split_(split), size_(static_cast<size_t>(data.size(split))) {}

void TokenView::read(size_t begin, size_t n, int* out) const {
  POTOP_CHECK(begin <= size_ && n <= size_ - begin, "read past the end of the tokens");
  if (data_) {
    data_->read(split_, begin, n, out);
    return;
  }
  std::copy_n(memory_.data() + begin, n, out);
}

BatchSampler::BatchSampler(TokenView tokens, int B, int T, uint64_t seed)
    : tokens_(tokens), B_(B), T_(T), rng_(seed) {
  POTOP_CHECK(B >= 1 && T >= 1, "B and T must be positive");
  POTOP_CHECK(tokens.size() >= static_cast<size_t>(T) + 1, "fewer tokens than one window");
  if (!tokens_.in_memory()) window_.resize(static_cast<size_t>(T) + 1);
}

void BatchSampler::next(int* x, int* y) {
  const uint64_t starts = tokens_.size() - static_cast<size_t>(T_);  // s in [0, n - T - 1]
  for (int b = 0; b < B_; ++b) {
    const size_t s = static_cast<size_t>(rng_.below(starts));
    const int* src;
    if (tokens_.in_memory()) {
      src = tokens_.memory().data() + s;
    } else {
      tokens_.read(s, static_cast<size_t>(T_) + 1, window_.data());
      src = window_.data();
    }
    int* xb = x + static_cast<size_t>(b) * T_;
    int* yb = y + static_cast<size_t>(b) * T_;
    for (int t = 0; t < T_; ++t) {
      xb[t] = src[t];
      yb[t] = src[t + 1];
    }
  }
}

void BatchSampler::skip() {
  const uint64_t starts = tokens_.size() - static_cast<size_t>(T_);
  for (int b = 0; b < B_; ++b) rng_.below(starts);  // the draws of next(), one per row
}

std::vector<EvalWindow> eval_windows(size_t n_tokens, int T, int stride) {
  if (T < 1) throw Error("evaluation window (block size) must be at least 1, got " + std::to_string(T));
  if (stride == 0) stride = T;
  if (stride < 1 || stride > T)
    throw Error("--stride must be between 1 and the block size " + std::to_string(T) + " (or 0 for the block size), got " +
                std::to_string(stride));
  std::vector<EvalWindow> windows;
  if (n_tokens < 2) return windows;
  const size_t targets = n_tokens - 1;  // target j predicts tokens[j + 1]
  const size_t first = std::min(targets, static_cast<size_t>(T));
  windows.push_back({0, static_cast<int>(first), 0});
  // Targets [c, e) are scored by a window that ends at e and starts T before it.
  for (size_t c = first; c < targets; c += static_cast<size_t>(stride)) {
    const size_t e = std::min(c + static_cast<size_t>(stride), targets);
    const size_t s = e - static_cast<size_t>(T);  // e > c >= T here
    windows.push_back({s, T, static_cast<int>(c - s)});
  }
  return windows;
}

int fill_eval_batch(int* x, int* y, TokenView tokens, std::span<const EvalWindow> windows, size_t first, int B,
                    int T) {
  int scored = 0;
  for (int b = 0; b < B; ++b) {
    int* xb = x + static_cast<size_t>(b) * T;
    int* yb = y + static_cast<size_t>(b) * T;
    const size_t w = first + static_cast<size_t>(b);
    const EvalWindow win = w < windows.size() ? windows[w] : EvalWindow{};
    POTOP_CHECK(win.length <= T && (win.length == 0 || win.start + static_cast<size_t>(win.length) < tokens.size()),
                "evaluation window does not fit the tokens or T");
    // x = tokens[start, start + length), y = the same shifted by one where scored, -1 elsewhere.
    tokens.read(win.start, static_cast<size_t>(win.length), xb);
    tokens.read(win.start + static_cast<size_t>(win.first_scored) + 1,
                static_cast<size_t>(win.length - win.first_scored), yb + win.first_scored);
    std::fill(yb, yb + win.first_scored, -1);
    std::fill(xb + win.length, xb + T, 0);
    std::fill(yb + win.length, yb + T, -1);
    scored += win.length - win.first_scored;
  }
  return scored;
}

}  // namespace potop
