#include "train/adamw.h"

namespace potop {

void AdamW::step(GPT& model, float lr) {
  ++t_;
  AdamWHyper h = hyper_;
  h.lr = lr;
  Arena& params = model.params();
  Arena& grads = model.grads();
  for (const TensorSpec& spec : model.layout().specs()) {
    const float decay = is_decayed_parameter(spec) ? hyper_.weight_decay : 0.0f;
    adamw_update(params.at(spec), grads.at(spec), m_.at(spec), v_.at(spec), spec.numel, h, decay, t_);
  }
}

}  // namespace potop
