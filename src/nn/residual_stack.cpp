#include "nn/residual_stack.h"

#include <utility>

#include "core/error.h"
#include "core/profile.h"
#include "kernels/dropout.h"
#include "kernels/layernorm.h"
#include "kernels/rmsnorm.h"

namespace potop {

LayerNormParams::LayerNormParams(LayerBuilder& b, const std::string& prefix, int n_embd, bool with_bias) {
  weight = b.param(prefix + ".weight", {n_embd}, TensorInit::ones(), false);
  if (with_bias) bias = b.param(prefix + ".bias", {n_embd}, TensorInit::zeros(), false);
}

ResidualStack::ResidualStack(LayerBuilder& b, NormPlacement norm, int n_embd, float eps, NormKind kind)
    : placement_(norm), kind_(kind), n_embd_(n_embd), eps_(eps) {
  POTOP_CHECK(kind == NormKind::kLayerNorm || norm == NormPlacement::kPre, "RMSNorm stacks are pre-norm");
  branch_ = b.acts.keep("sub-layer output", n_embd);
  d_stream_ = b.acts.scratch("d residual stream", n_embd);
  d_other_ = b.acts.scratch("d sub-layer", n_embd);
}

ResidualStack::Norm ResidualStack::plan_norm(LayerBuilder& b, const LayerNormParams& params) {
  if (kind_ == NormKind::kRms) {
    POTOP_CHECK(params.bias == kNoParam, "RMSNorm has no bias");
    const BufferId out = b.acts.keep("rmsnorm", n_embd_);
    return Norm{params, out, -1, b.acts.keep("rmsnorm statistics", 1)};
  }
  return Norm{params, b.acts.keep("layernorm", n_embd_), b.acts.keep("layernorm statistics", 1),
              b.acts.keep("layernorm statistics", 1)};
}

void ResidualStack::norm_forward(const Norm& m, const float* x, int N, const Frame& f) const {
  const float* w = f.value(m.params.weight);
  if (kind_ == NormKind::kRms)
    POTOP_PROFILED("rmsnorm", rmsnorm_forward(f.buffer(m.out), f.buffer(m.rstd), x, w, N, n_embd_, eps_));
  else
    POTOP_PROFILED("layernorm", layernorm_forward(f.buffer(m.out), f.buffer(m.mean), f.buffer(m.rstd), x, w,
                                                  f.value(m.params.bias), N, n_embd_, eps_));
}

void ResidualStack::residual_norm_forward(float* sum, const Norm& m, const float* a, const float* b, int N,
                                          const Frame& f) const {
  const float* w = f.value(m.params.weight);
  if (kind_ == NormKind::kRms)
    POTOP_PROFILED("residual+rmsnorm", residual_rmsnorm_forward(sum, f.buffer(m.out), f.buffer(m.rstd), a, b, w, N,
                                                                n_embd_, eps_));
  else
    POTOP_PROFILED("residual+layernorm",
                   residual_layernorm_forward(sum, f.buffer(m.out), f.buffer(m.mean), f.buffer(m.rstd), a, b, w,
                                              f.value(m.params.bias), N, n_embd_, eps_));
}

void ResidualStack::norm_backward(float* dinp, const float* dout, const float* inp, const Norm& m, int N,
                                  GradStore store, const Frame& f) const {
  const LayerNormParams& p = m.params;
  if (kind_ == NormKind::kRms)
    POTOP_PROFILED("rmsnorm", rmsnorm_backward(dinp, f.grad(p.weight), dout, inp, f.value(p.weight),
                                               f.buffer(m.rstd), N, n_embd_, store));
  else
    POTOP_PROFILED("layernorm", layernorm_backward(dinp, f.grad(p.weight), f.grad(p.bias), dout, inp,
                                                   f.value(p.weight), f.buffer(m.mean), f.buffer(m.rstd), N,
                                                   n_embd_, store));
}

void ResidualStack::add(LayerBuilder& b, const LayerNormParams& norm, std::unique_ptr<SubLayer> sublayer) {
  POTOP_CHECK(!final_, "sub-layers come before the final norm");
  layers_.push_back(Entry{plan_norm(b, norm), std::move(sublayer), b.claim_dropout_site(),
                          b.acts.keep("residual", n_embd_)});
}

void ResidualStack::set_final_norm(LayerBuilder& b, const LayerNormParams& norm) {
  POTOP_CHECK(placement_ == NormPlacement::kPre, "only a pre-LN stack ends with a LayerNorm");
  final_ = std::make_unique<Norm>(plan_norm(b, norm));
}

const float* ResidualStack::stream_before(int k, const float* x, const Frame& f) const {
  if (k == 0) return x;
  const Entry& prev = layers_[k - 1];
  return f.buffer(placement_ == NormPlacement::kPre ? prev.sum : prev.norm.out);
}

const float* ResidualStack::forward(const float* x, const LayerPass& pass, const Frame& f) const {
  const int N = pass.rows(), K = size();
  const size_t n = static_cast<size_t>(N) * n_embd_;
  const bool pre = placement_ == NormPlacement::kPre;
  POTOP_CHECK(!pre || final_, "a pre-LN stack needs its final norm");
  float* o = f.buffer(branch_);
  if (pre && K > 0) norm_forward(layers_[0].norm, x, N, f);  // LN_0(x)
  for (int k = 0; k < K; ++k) {
    const Entry& e = layers_[k];
    const float* xk = stream_before(k, x, f);
    e.sublayer->forward(o, pre ? f.buffer(e.norm.out) : xk, pass, f);  // o = f(LN(x)) or f(x)
    POTOP_PROFILED("dropout", dropout_forward(o, o, pass.dropout, pass.site_seed(e.dropout_site), n));
    // pre-LN: x' = x + o, and the next sub-layer's input LN(x') (or the output LN_final(x'));
    // post-LN: x' = LN(x + o) with this sub-layer's norm
    residual_norm_forward(f.buffer(e.sum), pre ? (k + 1 < K ? layers_[k + 1].norm : *final_) : e.norm, xk, o, N, f);
  }
  if (K == 0) return x;
  return f.buffer(pre ? final_->out : layers_[K - 1].norm.out);
}

float* ResidualStack::output_grad(const Frame& f) const {
  // pre-LN: d LN_final(x_K), which LN_final's backward turns into d x_K; post-LN: d x_K itself
  return f.buffer(placement_ == NormPlacement::kPre ? d_other_ : d_stream_);
}

ResidualStack::InputGrad ResidualStack::backward(const float* x, const LayerPass& pass, const Frame& f) const {
  const int N = pass.rows(), K = size();
  const size_t n = static_cast<size_t>(N) * n_embd_;
  const bool pre = placement_ == NormPlacement::kPre;
  float* d_stream = f.buffer(d_stream_);  // d x_{k+1}: the gradient of the stream after sub-layer k
  float* d_other = f.buffer(d_other_);
  auto norm_back = [&](float* dinp, const float* dout, const float* inp, const Norm& m, GradStore store) {
    norm_backward(dinp, dout, inp, m, N, store, f);
  };
  if (pre && K > 0) {
    // out = LN_final(x_K)
    norm_back(d_stream, d_other, f.buffer(layers_[K - 1].sum), *final_, GradStore::kOverwrite);
  }
  for (int k = K - 1; k >= 0; --k) {
    const Entry& e = layers_[k];
    const float* xk = stream_before(k, x, f);
    if (pre) {
      // x_{k+1} = x_k + dropout(o_k), o_k = f(LN_k(x_k)): d o_k is d x_{k+1}, which also flows on to d x_k
      const float* dout = dropout_grad(d_other, d_stream, pass, e.dropout_site, n);
      e.sublayer->backward(d_other, dout, f.buffer(e.norm.out), GradStore::kOverwrite, pass, f);  // d LN_k(x_k)
      norm_back(d_stream, d_other, xk, e.norm, GradStore::kAccumulate);                            // d x_k
    } else {
      // x_{k+1} = LN_k(s_k), s_k = x_k + dropout(f(x_k))
      norm_back(d_other, d_stream, f.buffer(e.sum), e.norm, GradStore::kOverwrite);      // d s_k
      const float* dout = dropout_grad(d_stream, d_other, pass, e.dropout_site, n);     // d x_{k+1} is spent
      e.sublayer->backward(d_other, dout, xk, GradStore::kAccumulate, pass, f);          // d x_k = d s_k + d via f
      std::swap(d_stream, d_other);
    }
    // Sub-layer k, its norm and everything declared after them (later sub-layers, the final
    // norm) have their gradients: multi-process training may start sending them.
    f.params.grads_final_from(e.norm.params.weight);
  }
  return {d_stream, d_other};
}

}  // namespace potop
