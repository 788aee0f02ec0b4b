#include "train/adamw.h"

namespace potop {

void AdamW::step(ParameterSet& params, float lr) {
  ++t_;
  AdamWHyper h = hyper_;
  h.lr = lr;
  Arena& values = params.values();
  Arena& grads = params.grads();
  for (const TensorSpec& spec : params.layout().specs()) {
    const float decay = spec.decay ? hyper_.weight_decay : 0.0f;
    adamw_update(values.at(spec), grads.at(spec), m_.at(spec), v_.at(spec), spec.numel, h, decay, t_);
  }
}

}  // namespace potop
