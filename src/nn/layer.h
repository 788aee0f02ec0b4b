// What the layers of a model share: how they are built (the parameters and activation buffers
// they declare, the dropout sites they claim), the memory one model instance gives them (Frame),
// what each pass tells them (LayerPass), and the interface of a sub-layer that the residual
// stack wraps in Add & Norm (SubLayer).
//
// A layer object is an immutable description: the ids of its tensors and buffers, and its
// sizes. The memory is passed in, so one description serves a model and all of its replicas.
#pragma once
#include <cstdint>

#include "core/arena.h"
#include "kernels/grad_store.h"
#include "nn/activations.h"
#include "nn/kv_cache.h"
#include "nn/parameters.h"

namespace potop {

// Collects what a model's layers declare while the model is built.
struct LayerBuilder {
  Layout params;        // the parameter layout, in declaration order (= checkpoint order)
  ActivationPlan acts;  // the activation and scratch buffers
  int dropout_sites = 0;
  int cache_slots = 0;  // self-attention layers that keep keys and values for generation
  int memory_slots = 0;  // cross-attention layers, each with its keys and values in a MemoryKV

  // Dropout masks are drawn per site and step: each call site of dropout claims its own number.
  int claim_dropout_site() { return dropout_sites++; }
  int claim_cache_slot() { return cache_slots++; }
  int claim_memory_slot() { return memory_slots++; }
  ParamId param(const std::string& name, const Shape& shape, TensorInit init, bool decay) {
    return declare(params, name, shape, init, decay);
  }
  // The (in, out) weight of a linear map, decayed, applied with linear() below: the tensors a
  // model may hold quantized.
  ParamId matrix(const std::string& name, int in, int out, TensorInit init) {
    const ParamId id = param(name, {in, out}, init, true);
    params.mark_matrix(static_cast<size_t>(id));
    return id;
  }
  // A (rows, K) table an output layer multiplies by, x · tableᵀ (TensorSpec::output_table).
  void output_table(ParamId id) { params.mark_output_table(static_cast<size_t>(id)); }
};

// One model instance's memory, as its layers see it.
struct Frame {
  ParameterSet& params;
  Activations& acts;

  const float* value(ParamId id) const { return params.value(id); }
  float* grad(ParamId id) const { return params.grad(id); }
  float* buffer(BufferId id) const { return acts[id]; }
};

// out (N, OC) = in (N, C) · W (C, OC) + b (b may be kNoParam), W declared with
// LayerBuilder::matrix: its float values, or its quantized rows in a model loaded quantized.
void linear(const Frame& f, float* out, const float* in, ParamId w, ParamId b, int N, int C, int OC);

// What one forward or backward pass tells every layer.
struct LayerPass {
  int B = 0, T = 0;           // B sequences of T positions in this pass (N = B·T rows)
  int pos0 = 0;               // position of the first one (> 0 when continuing from a KV cache)
  float dropout = 0.0f;       // the probability in effect: the model's when training, else 0
  uint64_t dropout_seed = 0;  // of the step (and shard)
  KVCache* cache = nullptr;   // generation: keys and values of the earlier positions
  // Batched decoding (GPT::forward_rows): B independent sequences, T = 1; row b continues the
  // sequence whose keys and values caches[b] holds, at position caches[b]->length (pos0 unused).
  KVCache* const* caches = nullptr;
  const int* lengths = nullptr;  // (B) or null: positions t >= lengths[b] of sequence b are padding
  // Cross-attention reads its keys and values from another sequence, the memory (the encoder's
  // output): (B, S, C), its padding, and where its gradient accumulates (+=).
  const float* memory = nullptr;
  float* d_memory = nullptr;
  int S = 0;
  const int* memory_lengths = nullptr;
  // Generation: sequence b's cross-attention reads keys and values projected once per source
  // sentence from memory_kv[b] (its own S; no padding) instead of projecting `memory` again.
  // Sequences of one sentence share one MemoryKV; sequences of different sentences may share a pass.
  const MemoryKV* const* memory_kv = nullptr;
  // The caller reads the loss (and the per-position losses), not the logits: with targets, an LM
  // head over a large vocabulary computes them a chunk of rows at a time (nn/lm_head.h).
  bool loss_only = false;
  // Generation reading a prompt: the LM head gives the last row's logits only (LogitRows::kLast).
  bool last_row_logits = false;

  int rows() const { return B * T; }
  int memory_rows() const { return B * S; }
  // The seed of one dropout site's mask in this pass.
  uint64_t site_seed(int site) const;
};

// The gradient through dropout at `site` (n values): d(dropout(x)) -> dx, written into scratch,
// which is returned; without dropout the gradient passes unchanged and dout is returned.
const float* dropout_grad(float* scratch, const float* dout, const LayerPass& pass, int site, size_t n);

// A sub-layer of a Transformer block: out (N, C) = f(in (N, C)), wrapped by the residual stack
// in Add & Norm (model/residual_stack.h). Attention and the feed-forward MLP are sub-layers.
class SubLayer {
 public:
  virtual ~SubLayer() = default;
  // out (N, C) = f(in). Keeps in the frame's buffers what backward needs; out itself is the
  // caller's scratch and is not kept.
  virtual void forward(float* out, const float* in, const LayerPass& pass, const Frame& f) const = 0;
  // din (N, C) += ∂loss/∂in (= with GradStore::kOverwrite) from dout = ∂loss/∂out, and the
  // sub-layer's parameter gradients (+=). in is the forward pass's input. dout is read only before
  // din is first written, so the two may be one buffer.
  virtual void backward(float* din, const float* dout, const float* in, GradStore store, const LayerPass& pass,
                        const Frame& f) const = 0;
};

}  // namespace potop
