#include "nn/embedding_layer.h"

#include "core/profile.h"
#include "kernels/dropout.h"
#include "kernels/embedding.h"

namespace potop {

EmbeddingLayer::EmbeddingLayer(LayerBuilder& b, const std::string& prefix, int vocab_size, int block_size,
                               int n_embd, PositionEncoding positions)
    : C_(n_embd), block_size_(block_size) {
  wte_ = b.param(prefix + "wte.weight", {vocab_size, n_embd}, TensorInit::normal(0.02), true);
  declare_rest(b, prefix, block_size, n_embd, positions);
}

EmbeddingLayer::EmbeddingLayer(LayerBuilder& b, const std::string& prefix, ParamId shared_table, int block_size,
                               int n_embd, PositionEncoding positions, float scale)
    : C_(n_embd), block_size_(block_size), scale_(scale), wte_(shared_table) {
  declare_rest(b, prefix, block_size, n_embd, positions);
}

void EmbeddingLayer::declare_rest(LayerBuilder& b, const std::string& prefix, int block_size, int n_embd,
                                  PositionEncoding positions) {
  if (positions == PositionEncoding::kLearned) {
    wpe_ = b.param(prefix + "wpe.weight", {block_size, n_embd}, TensorInit::normal(0.02), true);
  }
  dropout_site_ = b.claim_dropout_site();
  out_ = b.acts.keep("embedding", n_embd);
}

const float* EmbeddingLayer::sinusoid() const {
  std::call_once(sinusoid_once_, [this] {
    sinusoid_.resize(static_cast<size_t>(block_size_) * C_);
    sinusoidal_positions(sinusoid_.data(), block_size_, C_);
  });
  return sinusoid_.data();
}

const float* EmbeddingLayer::forward(const int* tokens, const LayerPass& pass, const Frame& f) const {
  float* out = f.buffer(out_);
  const float* positions = wpe_ != kNoParam ? f.value(wpe_) : sinusoid();
  const size_t n = static_cast<size_t>(pass.rows()) * C_;
  if (pass.caches) {  // independent rows, each at its own position
    for (int b = 0; b < pass.B; ++b)
      embedding_forward(out + static_cast<size_t>(b) * C_, tokens + b, f.value(wte_), positions, 1, 1, C_,
                        pass.caches[b]->length, scale_);
  } else {
    POTOP_PROFILED("embedding", embedding_forward(out, tokens, f.value(wte_), positions, pass.B, pass.T, C_,
                                                  pass.pos0, scale_));  // x = scale·wte[tok] + wpe[t]
  }
  POTOP_PROFILED("dropout", dropout_forward(out, out, pass.dropout, pass.site_seed(dropout_site_), n));
  return out;
}

void EmbeddingLayer::backward(const float* dout, float* scratch, const int* tokens, const LayerPass& pass,
                              const Frame& f) const {
  // x = dropout(scale·wte[tok] + wpe[t])
  const float* d = dropout_grad(scratch, dout, pass, dropout_site_, static_cast<size_t>(pass.rows()) * C_);
  POTOP_PROFILED("embedding", embedding_backward(f.grad(wte_), f.grad(wpe_), d, tokens, pass.B, pass.T, C_, scale_));
}

}  // namespace potop
