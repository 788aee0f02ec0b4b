// What every model built from a struct of layer descriptions shares (the GPT, the
// encoder-decoder, the bag-of-words LM): the architecture — its Layers, built once from the
// validated config and shared, never changed, by every replica — the parameter set (a replica
// shares its values and has its own gradients), and the parts of the model contract that follow
// from those two. A model derives from BuiltModel<Model, Layers, Config>, defines its Layers in
// its .cpp (nothing else needs to see them), and writes only what is its own: the layers,
// forward and backward, plan() and parameter_layout().
#pragma once
#include <cstdint>
#include <memory>
#include <utility>

#include "nn/activations.h"
#include "nn/model.h"
#include "nn/parameters.h"

namespace potop {

template <class Derived, class Layers, class Config>
class BuiltModel : public Model {
 public:
  const Config& config() const { return config_; }
  size_t num_parameters() const { return params_.count(); }
  void init_weights(uint64_t seed) { params_.init(seed); }

  ParameterSet& parameters() override { return params_; }
  const ParameterSet& parameters() const override { return params_; }
  std::unique_ptr<Model> replica() const override { return std::unique_ptr<Model>(new Derived(layers_, params_)); }
  MemoryPlan memory_plan(const BatchShape& shape) const override { return Derived::plan(config_, shape); }

 protected:
  // A new model: the layers of `config` (which validate it), its parameters zero (init_weights,
  // or load them).
  explicit BuiltModel(const Config& config)
      : config_(config), layers_(std::make_shared<const Layers>(config)), params_(layers_->built.params) {}
  // A replica: the same layers, the parameter values of `shared`.
  BuiltModel(std::shared_ptr<const Layers> layers, const ParameterSet& shared)
      : config_(layers->config), layers_(std::move(layers)), params_(shared.replica()) {}

  // Activations of one of the layers' plans, which keep the layers alive.
  Activations activations_of(const ActivationPlan& plan) const {
    return Activations(std::shared_ptr<const ActivationPlan>(layers_, &plan));
  }

  Config config_;
  std::shared_ptr<const Layers> layers_;  // the architecture: shared by replicas, never changed
  ParameterSet params_;
};

// The config, after its validate() passed: a Layers struct builds from validated(config), so
// that no layer ever sees an impossible size.
template <class Config>
const Config& validated(const Config& c) {
  c.validate();
  return c;
}

}  // namespace potop
