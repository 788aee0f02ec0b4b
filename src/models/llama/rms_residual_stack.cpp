#include "models/llama/rms_residual_stack.h"

#include "core/error.h"
#include "core/profile.h"
#include "kernels/dropout.h"
#include "models/llama/rmsnorm.h"

namespace potop {

RmsResidualStack::RmsResidualStack(LayerBuilder& b, int n_embd, float eps) : n_embd_(n_embd), eps_(eps) {
  branch_ = b.acts.keep("sub-layer output", n_embd);
  d_stream_ = b.acts.scratch("d residual stream", n_embd);
  d_other_ = b.acts.scratch("d sub-layer", n_embd);
}

ParamId RmsResidualStack::norm_weight(LayerBuilder& b, const std::string& name, int n_embd) {
  return b.param(name, {n_embd}, TensorInit::ones(), false);
}

RmsResidualStack::Norm RmsResidualStack::plan_norm(LayerBuilder& b, ParamId weight) {
  return Norm{weight, b.acts.keep("rmsnorm", n_embd_), b.acts.keep("rmsnorm statistics", 1)};
}

void RmsResidualStack::add(LayerBuilder& b, ParamId norm, std::unique_ptr<SubLayer> sublayer) {
  POTOP_CHECK(!final_, "sub-layers come before the final norm");
  layers_.push_back(Entry{plan_norm(b, norm), std::move(sublayer), b.claim_dropout_site(),
                          b.acts.keep("residual", n_embd_)});
}

void RmsResidualStack::set_final_norm(LayerBuilder& b, ParamId norm) {
  final_ = std::make_unique<Norm>(plan_norm(b, norm));
}

const float* RmsResidualStack::stream_before(int k, const float* x, const Frame& f) const {
  return k == 0 ? x : f.buffer(layers_[k - 1].sum);
}

const float* RmsResidualStack::forward(const float* x, const LayerPass& pass, const Frame& f) const {
  const int N = pass.rows(), C = n_embd_, K = size();
  const size_t n = static_cast<size_t>(N) * C;
  POTOP_CHECK(final_ && K > 0, "the stack needs its sub-layers and its final norm");
  float* o = f.buffer(branch_);
  const Norm& n0 = layers_[0].norm;
  POTOP_PROFILED("rmsnorm", rmsnorm_forward(f.buffer(n0.out), f.buffer(n0.rstd), x, f.value(n0.weight), N, C, eps_));
  for (int k = 0; k < K; ++k) {
    const Entry& e = layers_[k];
    e.sublayer->forward(o, f.buffer(e.norm.out), pass, f);  // o = f(RMSNorm(x))
    POTOP_PROFILED("dropout", dropout_forward(o, o, pass.dropout, pass.site_seed(e.dropout_site), n));
    // x' = x + o, and the next sub-layer's input RMSNorm(x') (or the output RMSNorm_final(x'))
    const Norm& m = k + 1 < K ? layers_[k + 1].norm : *final_;
    POTOP_PROFILED("residual+rmsnorm", residual_rmsnorm_forward(f.buffer(e.sum), f.buffer(m.out), f.buffer(m.rstd),
                                                                stream_before(k, x, f), o, f.value(m.weight), N, C,
                                                                eps_));
  }
  return f.buffer(final_->out);
}

RmsResidualStack::InputGrad RmsResidualStack::backward(const float* x, const LayerPass& pass, const Frame& f) const {
  const int N = pass.rows(), C = n_embd_, K = size();
  const size_t n = static_cast<size_t>(N) * C;
  float* d_stream = f.buffer(d_stream_);  // d x_{k+1}
  float* d_other = f.buffer(d_other_);
  auto norm_backward = [&](float* dinp, const float* dout, const float* inp, const Norm& m, GradStore store) {
    POTOP_PROFILED("rmsnorm", rmsnorm_backward(dinp, f.grad(m.weight), dout, inp, f.value(m.weight),
                                               f.buffer(m.rstd), N, C, store));
  };
  // out = RMSNorm_final(x_K)
  norm_backward(d_stream, d_other, f.buffer(layers_[K - 1].sum), *final_, GradStore::kOverwrite);
  for (int k = K - 1; k >= 0; --k) {
    const Entry& e = layers_[k];
    // x_{k+1} = x_k + dropout(o_k), o_k = f(RMSNorm_k(x_k)): d o_k is d x_{k+1}, which also flows on to d x_k
    const float* dout = dropout_grad(d_other, d_stream, pass, e.dropout_site, n);
    e.sublayer->backward(d_other, dout, f.buffer(e.norm.out), GradStore::kOverwrite, pass, f);  // d RMSNorm_k(x_k)
    norm_backward(d_stream, d_other, stream_before(k, x, f), e.norm, GradStore::kAccumulate);    // d x_k
    // Sub-layer k, its norm and everything declared after them have their gradients: multi-process
    // training may start sending them.
    f.params.grads_final_from(e.norm.weight);
  }
  return {d_stream, d_other};
}

}  // namespace potop
