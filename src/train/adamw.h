// AdamW over a model's parameter set: first and second moments in two arenas with the
// parameters' layout, weight decay only on the tensors whose spec says so (matrices and
// embeddings: nanoGPT's grouping).
#pragma once
#include <vector>

#include "core/arena.h"
#include "kernels/optimizer.h"
#include "nn/parameters.h"

namespace potop {

class AdamW {
 public:
  AdamW(const Layout& layout, const AdamWHyper& hyper) : m_(layout), v_(layout), hyper_(hyper) {}

  // One update of every parameter but the frozen ones from its gradient, at learning rate lr.
  void step(ParameterSet& params, float lr);
  // Leaves this tensor as it is in every later step: no update, no weight decay (a classifier's
  // body with --freeze-encoder).
  void freeze(ParamId id);

  long steps_taken() const { return t_; }
  void set_steps_taken(long t) { t_ = t; }  // when the moments are restored from a checkpoint
  Arena& m() { return m_; }
  Arena& v() { return v_; }
  const Arena& m() const { return m_; }
  const Arena& v() const { return v_; }
  size_t bytes() const { return m_.bytes() + v_.bytes(); }

 private:
  Arena m_, v_;
  AdamWHyper hyper_;
  std::vector<bool> frozen_;  // by ParamId; empty: none
  long t_ = 0;
};

}  // namespace potop
