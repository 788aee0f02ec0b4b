#include "nn/parameters.h"

#include <algorithm>

#include "core/profile.h"
#include "core/rng.h"

namespace potop {

ParameterSet::ParameterSet(Layout layout)
    : layout_(std::move(layout)), values_(std::make_shared<Arena>(layout_)) {}

ParameterSet ParameterSet::replica() const {
  ParameterSet r;
  r.layout_ = layout_;
  r.values_ = values_;
  return r;
}

Arena& ParameterSet::grads() {
  if (!grads_.data()) grads_ = Arena(layout_);
  return grads_;
}

void ParameterSet::init(uint64_t seed) {
  Rng rng(seed);
  for (const TensorSpec& spec : layout_.specs()) {
    float* w = values_->at(spec);
    switch (spec.init.kind) {
      case TensorInit::Kind::kZeros: std::fill_n(w, spec.numel, 0.0f); break;
      case TensorInit::Kind::kOnes: std::fill_n(w, spec.numel, 1.0f); break;
      case TensorInit::Kind::kNormal:
        for (size_t i = 0; i < spec.numel; ++i) w[i] = static_cast<float>(rng.normal() * spec.init.std);
        break;
    }
  }
}

void ParameterSet::zero_grad() { POTOP_PROFILED("zero_grad", grads().zero()); }

}  // namespace potop
