#include "nn/mlp_layer.h"

#include "core/profile.h"
#include "kernels/activation.h"
#include "kernels/linear.h"

namespace potop {

MlpLayer::MlpLayer(LayerBuilder& b, const std::string& prefix, const MlpConfig& config) : c_(config) {
  const int64_t C = c_.n_embd, hidden = c_.hidden;
  fc_w_ = b.matrix(prefix + ".c_fc.weight", C, hidden, TensorInit::normal(0.02));
  if (c_.bias) fc_b_ = b.param(prefix + ".c_fc.bias", {hidden}, TensorInit::zeros(), false);
  proj_w_ = b.matrix(prefix + ".c_proj.weight", hidden, C, TensorInit::normal(c_.proj_std));
  if (c_.bias) proj_b_ = b.param(prefix + ".c_proj.bias", {C}, TensorInit::zeros(), false);
  pre_ = b.acts.keep("mlp pre-activation", hidden);
  act_ = b.acts.keep("mlp activation", hidden);
  dhidden_ = b.acts.scratch("d mlp hidden", hidden);
}

void MlpLayer::forward(float* out, const float* in, const LayerPass& pass, const Frame& f) const {
  const int N = pass.rows(), C = c_.n_embd, H = c_.hidden;
  float* pre = f.buffer(pre_);
  float* act = f.buffer(act_);
  POTOP_PROFILED("fc", linear(f, pre, in, fc_w_, kNoParam, N, C, H));  // pre = in·W₁ (+ b₁ next)
  switch (c_.activation) {  // pre += b₁; act = f(pre)
    case Activation::kGelu: POTOP_PROFILED("bias+gelu", bias_gelu_forward(act, pre, f.value(fc_b_), N, H)); break;
    case Activation::kGeluErf:
      POTOP_PROFILED("bias+gelu", bias_gelu_erf_forward(act, pre, f.value(fc_b_), N, H));
      break;
    case Activation::kRelu: POTOP_PROFILED("bias+relu", bias_relu_forward(act, pre, f.value(fc_b_), N, H)); break;
  }
  POTOP_PROFILED("fc proj", linear(f, out, act, proj_w_, proj_b_, N, H, C));  // act·W₂ + b₂
}

void MlpLayer::backward(float* din, const float* dout, const float* in, GradStore store, const LayerPass& pass,
                        const Frame& f) const {
  const int N = pass.rows(), C = c_.n_embd, H = c_.hidden;
  float* d = f.buffer(dhidden_);
  // out = act·W₂ + b₂
  POTOP_PROFILED("fc proj", linear_backward(d, f.grad(proj_w_), f.grad(proj_b_), dout, f.buffer(act_),
                                            f.value(proj_w_), N, H, C, WeightLayout::kInOut, GradStore::kOverwrite));
  // act = f(pre), pre = in·W₁ + b₁: d pre in place, and d b₁
  const float* pre = f.buffer(pre_);
  constexpr GradStore kInPlace = GradStore::kOverwrite;
  switch (c_.activation) {
    case Activation::kGelu:
      POTOP_PROFILED("bias+gelu", bias_gelu_backward(d, f.grad(fc_b_), d, pre, N, H, kInPlace));
      break;
    case Activation::kGeluErf:
      POTOP_PROFILED("bias+gelu", bias_gelu_erf_backward(d, f.grad(fc_b_), d, pre, N, H, kInPlace));
      break;
    case Activation::kRelu:
      POTOP_PROFILED("bias+relu", bias_relu_backward(d, f.grad(fc_b_), d, pre, N, H, kInPlace));
      break;
  }
  // pre = in·W₁
  POTOP_PROFILED("fc", linear_backward(din, f.grad(fc_w_), nullptr, d, in, f.value(fc_w_), N, C, H,
                                       WeightLayout::kInOut, store));
}

}  // namespace potop
