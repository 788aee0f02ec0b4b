// What every model built from its Layers (a LayerBuilder's parameters and activation plan, built
// once from the config) has alike, written once: the Layers shared by its replicas, its own
// ParameterSet (a replica shares the values and has its own gradients), replica(), and the
// parameter accessors of the model contract. Derived is the model (GPT, BowLM, EncoderDecoder);
// Layers, defined in its .cpp, holds `built` (a LayerBuilder) and `config`.
#pragma once
#include <memory>
#include <utility>

#include "nn/model.h"
#include "nn/parameters.h"

namespace potop {

template <class Derived, class Layers>
class LayeredModel : public Model {
 public:
  void init_weights(uint64_t seed) { params_.init(seed); }  // parameters start at zero: draw them, or load them
  size_t num_parameters() const { return params_.count(); }

  ParameterSet& parameters() override { return params_; }
  const ParameterSet& parameters() const override { return params_; }
  int counted_targets() const override { return counted_; }
  // Derived(layers, shared): a private constructor, for this class alone (a friend).
  std::unique_ptr<Model> replica() const override { return std::unique_ptr<Model>(new Derived(layers_, params_)); }

 protected:
  // A new model: its parameters laid out by the layers.
  explicit LayeredModel(std::shared_ptr<const Layers> layers)
      : layers_(std::move(layers)), params_(layers_->built.params) {}
  // A replica: the same layers, the parameter values of `shared`.
  LayeredModel(std::shared_ptr<const Layers> layers, const ParameterSet& shared)
      : layers_(std::move(layers)), params_(shared.replica()) {}

  // The memory plan of a model whose activations all have one row per position of the batch
  // (B·T rows; its output buffers: output_rows of them, negative for all): its parameters and its
  // layers' activations, from the same layouts it allocates.
  static MemoryPlan token_rows_plan(const Layers& layers, const BatchShape& shape, double output_rows = -1) {
    MemoryPlan plan;
    plan.add_parameters(layers.built.params);
    plan.add_activations(layers.built.acts, double(shape.B) * shape.T, 0, "", output_rows);
    return plan;
  }

  std::shared_ptr<const Layers> layers_;  // the architecture: shared by replicas, never changed
  ParameterSet params_;
  int counted_ = 0;  // targets the last forward counted
};

}  // namespace potop
