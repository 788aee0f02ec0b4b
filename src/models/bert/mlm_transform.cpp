#include "models/bert/mlm_transform.h"

#include "core/profile.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "nn/mlp_layer.h"

namespace potop {

MlmTransform::MlmTransform(LayerBuilder& b, const TransformerConfig& c)
    : C_(c.n_embd), activation_(c.activation), eps_(c.norm_eps), ln_(b, "lm_head.ln", c.n_embd, c.bias) {
  w_ = b.matrix("lm_head.transform.weight", C_, C_, TensorInit::normal(0.02));
  if (c.bias) b_ = b.param("lm_head.transform.bias", {C_}, TensorInit::zeros(), false);
  pre_ = b.acts.keep("mlm transform pre-activation", C_);
  act_ = b.acts.keep("mlm transform activation", C_);
  mean_ = b.acts.keep("mlm transform layernorm statistics", 1);
  rstd_ = b.acts.keep("mlm transform layernorm statistics", 1);
  out_ = b.acts.keep("mlm transform output", C_);
  d_act_ = b.acts.scratch("d mlm transform", C_);
}

const float* MlmTransform::forward(const float* m, const LayerPass& pass, const Frame& f) const {
  const int M = pass.rows();
  float *pre = f.buffer(pre_), *act = f.buffer(act_), *out = f.buffer(out_);
  linear(f, pre, m, w_, kNoParam, M, C_, C_);  // pre = m·W (+ b next)
  bias_activation_forward(activation_, act, pre, f.value(b_), M, C_);  // act = f(pre + b)
  layernorm_forward(out, f.buffer(mean_), f.buffer(rstd_), act, f.value(ln_.weight), f.value(ln_.bias), M, C_, eps_);
  return out;
}

void MlmTransform::backward(float* dm, const float* dt, const float* m, const LayerPass& pass, const Frame& f) const {
  const int M = pass.rows();
  float* d = f.buffer(d_act_);
  // t = LN(act)
  layernorm_backward(d, f.grad(ln_.weight), f.grad(ln_.bias), dt, f.buffer(act_), f.value(ln_.weight),
                     f.buffer(mean_), f.buffer(rstd_), M, C_, GradStore::kOverwrite);
  // act = f(pre + b): d pre in place, and d b
  const float* pre = f.buffer(pre_);
  bias_activation_backward(activation_, d, f.grad(b_), pre, M, C_);
  // pre = m·W
  linear_backward(dm, f.grad(w_), nullptr, d, m, f.value(w_), M, C_, C_, WeightLayout::kInOut, GradStore::kOverwrite);
}

}  // namespace potop
