#include "models/llama/swiglu_mlp.h"

#include "core/profile.h"
#include "kernels/linear.h"
#include "models/llama/swiglu.h"

namespace potop {

SwiGluMlp::SwiGluMlp(LayerBuilder& b, const std::string& prefix, int n_embd, int hidden, double proj_std)
    : C_(n_embd), F_(hidden) {
  gate_up_w_ = b.matrix(prefix + ".gate_up_proj.weight", C_, 2 * F_, TensorInit::normal(0.02));
  down_w_ = b.matrix(prefix + ".down_proj.weight", F_, C_, TensorInit::normal(proj_std));
  gate_up_ = b.acts.keep("mlp gate and up", 2 * int64_t{F_});
  act_ = b.acts.keep("mlp activation", F_);
  dact_ = b.acts.scratch("d mlp hidden", F_);
  dgate_up_ = b.acts.scratch("d mlp gate and up", 2 * int64_t{F_});
}

void SwiGluMlp::forward(float* out, const float* in, const LayerPass& pass, const Frame& f) const {
  const int N = pass.rows();
  float* gate_up = f.buffer(gate_up_);
  float* act = f.buffer(act_);
  POTOP_PROFILED("gate+up", linear(f, gate_up, in, gate_up_w_, kNoParam, N, C_, 2 * F_));  // [gate up] = in·W
  POTOP_PROFILED("swiglu", swiglu_forward(act, gate_up, N, F_));                          // silu(gate) ⊙ up
  POTOP_PROFILED("down", linear(f, out, act, down_w_, kNoParam, N, F_, C_));              // ·W_down
}

void SwiGluMlp::backward(float* din, const float* dout, const float* in, GradStore store, const LayerPass& pass,
                         const Frame& f) const {
  const int N = pass.rows();
  constexpr GradStore kSet = GradStore::kOverwrite;
  float* dact = f.buffer(dact_);
  float* dgate_up = f.buffer(dgate_up_);
  // out = act·W_down
  POTOP_PROFILED("down", linear_backward(dact, f.grad(down_w_), nullptr, dout, f.buffer(act_), f.value(down_w_), N,
                                         F_, C_, WeightLayout::kInOut, kSet));
  // act = silu(gate) ⊙ up
  POTOP_PROFILED("swiglu", swiglu_backward(dgate_up, dact, f.buffer(gate_up_), N, F_, kSet));
  // [gate up] = in·W
  POTOP_PROFILED("gate+up", linear_backward(din, f.grad(gate_up_w_), nullptr, dgate_up, in, f.value(gate_up_w_), N,
                                            C_, 2 * F_, WeightLayout::kInOut, store));
}

}  // namespace potop
