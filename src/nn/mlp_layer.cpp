#include "nn/mlp_layer.h"

#include "core/error.h"
#include "core/profile.h"
#include "kernels/activation.h"
#include "kernels/linear.h"
#include "kernels/swiglu.h"

namespace potop {

void bias_activation_forward(Activation f, float* act, float* pre, const float* bias, int N, int H) {
  switch (f) {
    case Activation::kGelu: bias_gelu_forward(act, pre, bias, N, H); return;
    case Activation::kGeluErf: bias_gelu_erf_forward(act, pre, bias, N, H); return;
    case Activation::kRelu: bias_relu_forward(act, pre, bias, N, H); return;
    case Activation::kSwiGlu: break;
  }
  POTOP_CHECK(false, "SwiGLU is a gated unit: MlpLayer computes it");
}

void bias_activation_backward(Activation f, float* d, float* dbias, const float* pre, int N, int H) {
  constexpr GradStore kInPlace = GradStore::kOverwrite;
  switch (f) {
    case Activation::kGelu: bias_gelu_backward(d, dbias, d, pre, N, H, kInPlace); return;
    case Activation::kGeluErf: bias_gelu_erf_backward(d, dbias, d, pre, N, H, kInPlace); return;
    case Activation::kRelu: bias_relu_backward(d, dbias, d, pre, N, H, kInPlace); return;
    case Activation::kSwiGlu: break;
  }
  POTOP_CHECK(false, "SwiGLU is a gated unit: MlpLayer computes it");
}

MlpLayer::MlpLayer(LayerBuilder& b, const std::string& prefix, const MlpConfig& config) : c_(config) {
  const int64_t C = c_.n_embd, hidden = c_.hidden, W = in_width();
  fc_w_ = b.matrix(prefix + "." + c_.in_name + ".weight", C, W, TensorInit::normal(0.02));
  if (c_.bias) fc_b_ = b.param(prefix + "." + c_.in_name + ".bias", {W}, TensorInit::zeros(), false);
  proj_w_ = b.matrix(prefix + "." + c_.out_name + ".weight", hidden, C, TensorInit::normal(c_.proj_std));
  if (c_.bias) proj_b_ = b.param(prefix + "." + c_.out_name + ".bias", {C}, TensorInit::zeros(), false);
  if (gated()) {
    pre_ = b.acts.keep("mlp gate and up", W);
    act_ = b.acts.keep("mlp activation", hidden);
    dhidden_ = b.acts.scratch("d mlp hidden", hidden);
    dpre_ = b.acts.scratch("d mlp gate and up", W);
    return;
  }
  pre_ = b.acts.keep("mlp pre-activation", hidden);
  act_ = b.acts.keep("mlp activation", hidden);
  dhidden_ = b.acts.scratch("d mlp hidden", hidden);
}

void MlpLayer::forward(float* out, const float* in, const LayerPass& pass, const Frame& f) const {
  const int N = pass.rows(), C = c_.n_embd, H = c_.hidden;
  float* pre = f.buffer(pre_);
  float* act = f.buffer(act_);
  if (gated()) {
    POTOP_PROFILED("fc", linear(f, pre, in, fc_w_, fc_b_, N, C, 2 * H));  // [gate up] = in·W₁ + b₁
    POTOP_PROFILED("swiglu", swiglu_forward(act, pre, N, H));            // act = silu(gate) ⊙ up
    POTOP_PROFILED("fc proj", linear(f, out, act, proj_w_, proj_b_, N, H, C));  // act·W₂ + b₂
    return;
  }
  POTOP_PROFILED("fc", linear(f, pre, in, fc_w_, kNoParam, N, C, H));  // pre = in·W₁ (+ b₁ next)
  // act = f(pre + b₁)
  POTOP_PROFILED(c_.activation == Activation::kRelu ? "bias+relu" : "bias+gelu",
                 bias_activation_forward(c_.activation, act, pre, f.value(fc_b_), N, H));
  POTOP_PROFILED("fc proj", linear(f, out, act, proj_w_, proj_b_, N, H, C));  // act·W₂ + b₂
}

void MlpLayer::backward(float* din, const float* dout, const float* in, GradStore store, const LayerPass& pass,
                        const Frame& f) const {
  const int N = pass.rows(), C = c_.n_embd, H = c_.hidden;
  float* d = f.buffer(dhidden_);
  // out = act·W₂ + b₂
  POTOP_PROFILED("fc proj", linear_backward(d, f.grad(proj_w_), f.grad(proj_b_), dout, f.buffer(act_),
                                            f.value(proj_w_), N, H, C, WeightLayout::kInOut, GradStore::kOverwrite));
  const float* pre = f.buffer(pre_);
  if (gated()) {
    float* dpre = f.buffer(dpre_);
    // act = silu(gate) ⊙ up
    POTOP_PROFILED("swiglu", swiglu_backward(dpre, d, pre, N, H, GradStore::kOverwrite));
    // [gate up] = in·W₁ + b₁
    POTOP_PROFILED("fc", linear_backward(din, f.grad(fc_w_), f.grad(fc_b_), dpre, in, f.value(fc_w_), N, C, 2 * H,
                                         WeightLayout::kInOut, store));
    return;
  }
  // act = f(pre), pre = in·W₁ + b₁: d pre in place, and d b₁
  POTOP_PROFILED(c_.activation == Activation::kRelu ? "bias+relu" : "bias+gelu",
                 bias_activation_backward(c_.activation, d, f.grad(fc_b_), pre, N, H));
  // pre = in·W₁
  POTOP_PROFILED("fc", linear_backward(din, f.grad(fc_w_), nullptr, d, in, f.value(fc_w_), N, C, H,
                                       WeightLayout::kInOut, store));
}

}  // namespace potop
