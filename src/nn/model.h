// The model contract: what every trainable model in potop offers, so that one train_step
// (train/train_step.h), one BatchParallel (train/batch_parallel.h), one run harness
// (train/run.h), one checkpoint format (checkpoint/) and one memory check serve them all.
//
//   forward(batch, pass)  -> the mean loss over the batch's counted targets, keeping what
//                            backward needs
//   backward(loss_scale)  -> gradients of loss_scale · that loss, accumulated (+=) into
//                            parameters().grads()
//   parameters()          -> the ParameterSet: values, gradients, init rules, decay flags
//   replica()             -> a model sharing the parameter values, with its own gradients and
//                            activations, so that several can run side by side on a batch's rows
//   memory_plan(shape)    -> bytes of everything it allocates for that batch shape, from the
//                            same layouts it allocates with
// docs/architecture.md shows how the GPT implements it and how a new model would.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "data/batch.h"
#include "nn/parameters.h"

namespace potop {

class ActivationPlan;

// How one forward pass runs.
struct Pass {
  bool training = false;      // dropout on (with the model's probability) or off
  uint64_t dropout_seed = 0;  // dropout masks are a function of this seed: a step, a shard
};

// What a model allocates, by kind, for one batch shape; computed in double before allocating, so
// an impossible size is reported rather than attempted.
struct MemoryPlan {
  struct Line {
    std::string what;  // "parameters", "gradients", "activation qkv", "backward scratch", ...
    double bytes = 0;
    bool shared = false;  // the same memory for a model and its replicas (parameter values)
  };
  std::vector<Line> lines;
  // The largest single tensor (the kernels index with int, so it must stay below 2^31 values).
  std::string largest_tensor;
  double largest_floats = 0;
  bool largest_is_activation = false;  // it grows with the batch (else: a parameter)

  double total() const;
  double bytes(const std::string& what) const;  // 0 when absent

  // The lines every model has: its parameters' values (shared with replicas) and gradients.
  void add_parameters(const Layout& params);
  // The activations of one plan for this many rows (and rows of the memory sequence, for
  // cross-attention; and output rows, negative for token_rows), each line's name after `prefix`
  // ("encoder ", or none).
  void add_activations(const ActivationPlan& acts, double token_rows, double memory_rows = 0,
                       const std::string& prefix = "", double output_rows = -1);
};

// A model's config, checked before its layers are built from it (validate throws an Error
// naming the field): every model's Layers constructor starts with it.
template <class Config>
const Config& validated(const Config& config) {
  config.validate();
  return config;
}

class Model {
 public:
  virtual ~Model() = default;

  virtual ParameterSet& parameters() = 0;
  virtual const ParameterSet& parameters() const = 0;

  // Sizes the activation buffers for batches up to this shape (allocates only to grow).
  virtual void reserve(const BatchShape& shape) = 0;
  // The mean loss over the counted targets (0 when there are none, or no targets).
  virtual float forward(const Batch& batch, const Pass& pass) = 0;
  // Targets the last forward counted.
  virtual int counted_targets() const = 0;
  // Gradients of loss_scale · (the last forward's mean loss), accumulated into parameters().grads().
  virtual void backward(float loss_scale) = 0;

  virtual std::unique_ptr<Model> replica() const = 0;

  // Parameters, gradients, activations and scratch for batches of this shape.
  virtual MemoryPlan memory_plan(const BatchShape& shape) const = 0;
};

}  // namespace potop
