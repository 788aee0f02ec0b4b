#include "nn/lm_head.h"

#include "core/profile.h"
#include "kernels/linear.h"
#include "kernels/softmax.h"

namespace potop {

TiedLMHead::TiedLMHead(LayerBuilder& b, ParamId token_table, int vocab_size, int n_embd, ParamId bias,
                       float label_smoothing)
    : wte_(token_table), bias_(bias), V_(vocab_size), C_(n_embd), label_smoothing_(label_smoothing) {
  logits_ = b.acts.keep("logits", vocab_size);
  probs_ = b.acts.keep("probabilities", vocab_size);
  losses_ = b.acts.keep("losses", 1);
  dlosses_ = b.acts.scratch("d losses", 1);
}

float TiedLMHead::forward(const float* x, const int* targets, const LayerPass& pass, const Frame& f,
                          int& counted) const {
  const int N = pass.rows();
  float* logits = f.buffer(logits_);
  POTOP_PROFILED("lm head", linear_forward(logits, x, f.value(wte_), f.value(bias_), N, C_, V_, WeightLayout::kOutIn));  // logits = x·wteᵀ (+ bias)
  counted = 0;
  if (!targets) return 0.0f;
  float* losses = f.buffer(losses_);
  POTOP_PROFILED("cross-entropy", crossentropy_forward(losses, f.buffer(probs_), logits, targets, N, V_,
                                                                       label_smoothing_));
  double sum = 0;
  for (int i = 0; i < N; ++i) {
    if (targets[i] >= 0) sum += losses[i], ++counted;
  }
  return counted ? static_cast<float>(sum / counted) : 0.0f;
}

void TiedLMHead::backward(float* dx, float loss_scale, int counted, const float* x, const int* targets,
                          const LayerPass& pass, const Frame& f) const {
  const int N = pass.rows();
  // loss = Σ losses / counted
  float* dlosses = f.buffer(dlosses_);
  const float dloss = counted ? loss_scale / static_cast<float>(counted) : 0.0f;
  for (int i = 0; i < N; ++i) dlosses[i] = targets[i] >= 0 ? dloss : 0.0f;
  float* probs = f.buffer(probs_);
  float* dlogits = probs;  // the largest activation exists once
  POTOP_PROFILED("cross-entropy", crossentropy_backward(dlogits, probs, targets, dlosses, N, V_,
                                                                        GradStore::kOverwrite, label_smoothing_));
  // logits = x·wteᵀ
  POTOP_PROFILED("lm head", linear_backward(dx, f.grad(wte_), f.grad(bias_), dlogits, x, f.value(wte_), N, C_, V_,
                                            WeightLayout::kOutIn, GradStore::kOverwrite));
}

}  // namespace potop
