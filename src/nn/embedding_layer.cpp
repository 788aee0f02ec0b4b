#include "nn/embedding_layer.h"

#include "core/profile.h"
#include "kernels/dropout.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"

namespace potop {

EmbeddingLayer::EmbeddingLayer(LayerBuilder& b, const std::string& prefix, int vocab_size, int block_size,
                               int n_embd, PositionEncoding positions, const EmbeddingExtras& extras)
    : C_(n_embd), block_size_(block_size) {
  const std::string name = extras.token_name.empty() ? prefix + "wte.weight" : extras.token_name;
  wte_ = b.param(name, {vocab_size, n_embd}, TensorInit::normal(0.02), true);
  declare_rest(b, prefix, block_size, n_embd, positions, extras);
}

EmbeddingLayer::EmbeddingLayer(LayerBuilder& b, const std::string& prefix, ParamId shared_table, int block_size,
                               int n_embd, PositionEncoding positions, float scale)
    : C_(n_embd), block_size_(block_size), scale_(scale), wte_(shared_table) {
  declare_rest(b, prefix, block_size, n_embd, positions, {});
}

void EmbeddingLayer::declare_rest(LayerBuilder& b, const std::string& prefix, int block_size, int n_embd,
                                  PositionEncoding positions, const EmbeddingExtras& extras) {
  positions_ = positions;
  if (positions == PositionEncoding::kLearned) {
    const std::string name = extras.position_name.empty() ? prefix + "wpe.weight" : extras.position_name;
    wpe_ = b.param(name, {block_size, n_embd}, TensorInit::normal(0.02), true);
  }
  if (extras.token_types > 0)
    wtt_ = b.param(prefix + "wtt.weight", {extras.token_types, n_embd}, TensorInit::normal(0.02), true);
  if (extras.norm) {
    ln_ = std::make_unique<LayerNormParams>(b, prefix + "ln_e", n_embd, extras.bias);
    eps_ = extras.eps;
    sum_ = b.acts.keep("embedding sum", n_embd);
    mean_ = b.acts.keep("embedding layernorm statistics", 1);
    rstd_ = b.acts.keep("embedding layernorm statistics", 1);
    d_sum_ = b.acts.scratch("d embedding sum", n_embd);
  }
  if (extras.dropout) dropout_site_ = b.claim_dropout_site();
  out_ = b.acts.keep("embedding", n_embd);
}

const float* EmbeddingLayer::sinusoid() const {
  std::call_once(sinusoid_once_, [this] {
    sinusoid_.resize(static_cast<size_t>(block_size_) * C_);
    sinusoidal_positions(sinusoid_.data(), block_size_, C_);
  });
  return sinusoid_.data();
}

const float* EmbeddingLayer::positions(const Frame& f) const {
  switch (positions_) {
    case PositionEncoding::kLearned: return f.value(wpe_);
    case PositionEncoding::kSinusoidal: return sinusoid();
    case PositionEncoding::kRotary: return nullptr;
  }
  return nullptr;
}

const float* EmbeddingLayer::forward(const int* tokens, const LayerPass& pass, const Frame& f) const {
  float* out = f.buffer(out_);
  float* sum = ln_ ? f.buffer(sum_) : out;
  const float* positions = this->positions(f);
  const int N = pass.rows();
  const size_t n = static_cast<size_t>(N) * C_;
  if (pass.caches) {  // independent rows, each at its own position
    for (int b = 0; b < pass.B; ++b)
      embedding_forward(sum + static_cast<size_t>(b) * C_, tokens + b, f.value(wte_), positions, 1, 1, C_,
                        pass.caches[b]->length, scale_);
  } else {
    POTOP_PROFILED("embedding", embedding_forward(sum, tokens, f.value(wte_), positions, pass.B, pass.T, C_,
                                                  pass.pos0, scale_));  // x = scale·wte[tok] + wpe[t]
  }
  if (wtt_ != kNoParam) {  // + wtt[0]: every token is of segment 0
    const float* segment = f.value(wtt_);
    for (int r = 0; r < N; ++r)
      for (int c = 0; c < C_; ++c) sum[static_cast<size_t>(r) * C_ + c] += segment[c];
  }
  if (ln_)  // LN_e(x)
    POTOP_PROFILED("layernorm", layernorm_forward(out, f.buffer(mean_), f.buffer(rstd_), sum, f.value(ln_->weight),
                                                  f.value(ln_->bias), N, C_, eps_));
  if (dropout_site_ >= 0)
    POTOP_PROFILED("dropout", dropout_forward(out, out, pass.dropout, pass.site_seed(dropout_site_), n));
  return out;
}

void EmbeddingLayer::backward(const float* dout, float* scratch, const int* tokens, const LayerPass& pass,
                              const Frame& f) const {
  // x = dropout(LN_e(scale·wte[tok] + wpe[t] + wtt[0])), LN_e and wtt where the model has them
  const int N = pass.rows();
  const float* d = dropout_site_ >= 0 ? dropout_grad(scratch, dout, pass, dropout_site_, static_cast<size_t>(N) * C_)
                                      : dout;
  if (ln_) {
    float* d_sum = f.buffer(d_sum_);
    POTOP_PROFILED("layernorm", layernorm_backward(d_sum, f.grad(ln_->weight), f.grad(ln_->bias), d, f.buffer(sum_),
                                                   f.value(ln_->weight), f.buffer(mean_), f.buffer(rstd_), N, C_,
                                                   GradStore::kOverwrite));
    d = d_sum;
  }
  if (wtt_ != kNoParam) {
    float* d_segment = f.grad(wtt_);  // row 0
    for (int r = 0; r < N; ++r)
      for (int c = 0; c < C_; ++c) d_segment[c] += d[static_cast<size_t>(r) * C_ + c];
  }
  POTOP_PROFILED("embedding", embedding_backward(f.grad(wte_), f.grad(wpe_), d, tokens, pass.B, pass.T, C_, scale_));
}

}  // namespace potop
