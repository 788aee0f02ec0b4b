#include "train/adamw.h"

namespace potop {

void AdamW::step(ParameterSet& params, float lr) {
  ++t_;
  AdamWHyper h = hyper_;
  h.lr = lr;
  Arena& values = params.values();
  Arena& grads = params.grads();
  const std::vector<TensorSpec>& specs = params.layout().specs();
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i < frozen_.size() && frozen_[i]) continue;
    const TensorSpec& spec = specs[i];
    const float decay = spec.decay ? hyper_.weight_decay : 0.0f;
    adamw_update(values.at(spec), grads.at(spec), m_.at(spec), v_.at(spec), spec.numel, h, decay, t_);
  }
}

void AdamW::freeze(ParamId id) {
  if (frozen_.size() <= size_t(id)) frozen_.resize(size_t(id) + 1, false);
  frozen_[size_t(id)] = true;
}

}  // namespace potop
