// The buffers a model's forward pass keeps for its backward pass, and the scratch its backward
// pass uses, planned before anything is allocated.
//
// Every buffer holds a fixed number of floats per row, where a row is one position of one
// sequence: B·T rows for the batch's tokens, or B·S rows for the sequence a cross-attention layer
// reads its keys and values from (its "memory", the encoder's output). So one plan serves every
// batch shape: reserve() sizes the buffers for the largest number of rows seen, and the memory
// plan of any batch shape is a sum over the plan, in double, before allocating anything.
//
// Layers add their buffers while the model is built and keep the ids. Scratch buffers are
// shared: every layer that asks for scratch of the same kind gets the same buffer (sized for the
// largest request), because backward passes run one layer at a time.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/arena.h"

namespace potop {

using BufferId = int32_t;

enum class Rows {
  kTokens,  // B·T: one row per position of the batch
  kMemory,  // B·S: one row per position of the sequence cross-attention attends to
  // B·T at most, allocated only for the rows a pass asks for (Activations::reserve_output): an
  // LM head's logits, which a loss-only pass over a large vocabulary never holds whole.
  kOutput,
};

class ActivationPlan {
 public:
  // A buffer the forward pass fills and the backward pass reads. `group` names what it holds for
  // the memory plan ("qkv", "mlp hidden"); buffers of one group (one per layer) are shown together.
  BufferId keep(const std::string& group, int64_t per_row, Rows rows = Rows::kTokens);
  // A buffer only the backward pass uses, shared by every caller naming the same kind.
  BufferId scratch(const std::string& kind, int64_t per_row, Rows rows = Rows::kTokens);

  struct Buffer {
    std::string group;
    int64_t per_row = 0;
    Rows rows = Rows::kTokens;
    bool scratch = false;
  };
  const std::vector<Buffer>& buffers() const { return buffers_; }

  // Bytes per group for a batch of (tokens, memory) rows, kept buffers first, then one line for
  // all scratch: ("activation <group>", bytes)..., ("backward scratch", bytes). Output buffers
  // count output_rows (negative: token_rows).
  std::vector<std::pair<std::string, double>> bytes(double token_rows, double memory_rows = 0,
                                                    double output_rows = -1) const;
  // The largest single buffer at that size: its group and its number of floats.
  std::pair<std::string, double> largest(double token_rows, double memory_rows = 0, double output_rows = -1) const;

 private:
  std::vector<Buffer> buffers_;
};

// One model instance's buffers, laid out by a shared plan.
class Activations {
 public:
  Activations() = default;
  explicit Activations(std::shared_ptr<const ActivationPlan> plan) : plan_(std::move(plan)) {}
  // The buffers of a plan that `owner` holds (a model's layers, shared by its replicas), which
  // stays alive as long as these activations do.
  template <class Owner>
  Activations(const std::shared_ptr<const Owner>& owner, const ActivationPlan& plan)
      : Activations(std::shared_ptr<const ActivationPlan>(owner, &plan)) {}

  // Sizes the kept buffers for at least this many rows; reallocates only to grow, so a training
  // loop allocates nothing after its first step. Scratch is allocated by the first backward pass
  // (generation never needs it) and grows the same way.
  void reserve(int64_t token_rows, int64_t memory_rows = 0);
  void reserve_scratch();
  // Sizes the output buffers for at least this many rows, the same way; a pass that never asks
  // for them allocates none.
  void reserve_output(int64_t rows);

  float* operator[](BufferId id) const { return pointers_[static_cast<size_t>(id)]; }

 private:
  enum class Part { kKept, kScratch, kOutput };
  void bind(Part part, Arena& arena, int64_t token_rows, int64_t memory_rows);

  std::shared_ptr<const ActivationPlan> plan_;
  int64_t token_rows_ = 0, memory_rows_ = 0;          // capacity of the kept buffers
  int64_t scratch_tokens_ = 0, scratch_memory_ = 0;  // capacity of the scratch
  int64_t output_rows_ = 0;                           // capacity of the output buffers
  Arena kept_, scratch_, output_;
  std::vector<float*> pointers_;
};

}  // namespace potop
