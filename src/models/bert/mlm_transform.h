// The transform Hugging Face's BERT puts between its encoder and its tied decoder
// (BertPredictionHeadTransform), applied to the masked rows m (M, C) only:
//   t = LN(f(m·W + b))      W (C, C), f the body's activation, LN with the body's eps
// Parameters: lm_head.transform.weight (in, out), lm_head.transform.bias, lm_head.ln.weight and
// lm_head.ln.bias. A BERT has it when its config says mlm_transform (an imported BERT's does).
#pragma once
#include <string>

#include "nn/layer.h"
#include "nn/residual_stack.h"
#include "nn/transformer_config.h"

namespace potop {

class MlmTransform {
 public:
  MlmTransform(LayerBuilder& b, const TransformerConfig& c);

  // t (M, C) from m (M, C); writes its kept buffers and returns t.
  const float* forward(const float* m, const LayerPass& pass, const Frame& f) const;
  // dm (M, C) from dt, overwritten; the transform's gradients accumulate.
  void backward(float* dm, const float* dt, const float* m, const LayerPass& pass, const Frame& f) const;

 private:
  int C_;
  Activation activation_;
  float eps_;
  ParamId w_ = kNoParam, b_ = kNoParam;
  LayerNormParams ln_;
  BufferId pre_, act_, mean_, rstd_, out_;  // kept: before and after f, LN's statistics, t
  BufferId d_act_;                          // scratch: d of f's output, then of its input
};

}  // namespace potop
