// The causal decoder, one client of the model contract (nn/model.h) for every decoder-only
// architecture (the GPT's, the Llama's: a kind is a row and a mapping onto BodyConfig's switches,
// nn/body_config.h, not a class):
//
//   x      = dropout(wte[tokens] + positions)          EmbeddingLayer (rotary: no positions here)
//   h      = blocks(x): per block, a norm around         ResidualStack (LayerNorm or RMSNorm, pre or
//              masked multi-head self-attention,         post) of AttentionLayer (causal; grouped
//                                                        K/V heads; RoPE on Q and K when rotary)
//              then the feed-forward MLP                 MlpLayer (GELU, ReLU or SwiGLU)
//   logits = h · Wᵀ, W = wte (tied) or its own table; loss = cross-entropy      TiedLMHead
//
// with GPT-2's initialisation: N(0, 0.02) for matrices and embeddings, N(0, 0.02/√(2·n_layer)) for
// the projections into the residual stream, zero biases, unit norm gains — each a rule in the
// tensor's spec. Parameters follow the architecture's names (BodyNames), stored (in, out).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/activations.h"
#include "nn/body_config.h"
#include "nn/kv_cache.h"
#include "nn/layer.h"
#include "nn/layered_model.h"
#include "nn/model.h"
#include "nn/tasks.h"

namespace potop {

struct DecoderLayers;  // the architecture (causal_decoder.cpp)

class CausalDecoder : public LayeredModel<CausalDecoder, DecoderLayers>, public CausalLM, public SelfAttention {
 public:
  explicit CausalDecoder(const BodyConfig& shape);  // parameters zero: init_weights, or load them
  // What CausalDecoder(shape) and reserve(batch) would allocate, computed from the same layouts
  // without allocating anything (the memory check before a run).
  static MemoryPlan plan(const BodyConfig& shape, const BatchShape& batch);
  // The names, shapes, init rules and decay flags of the parameters, in checkpoint order, without
  // allocating them.
  static Layout parameter_layout(const BodyConfig& shape);

  const BodyConfig& shape() const;

  // The model contract.
  void reserve(const BatchShape& batch) override;
  float forward(const Batch& batch, const Pass& pass) override;
  void backward(float loss_scale) override;
  MemoryPlan memory_plan(const BatchShape& batch) const override { return plan(shape(), batch); }

  // Generation: tokens (1, T) continue the sequence whose keys and values the cache holds
  // (cache.length positions), and are appended to it. No dropout, no loss. logits() are (T, V),
  // or the last position's (1, V) with LogitRows::kLast.
  void forward(const int* tokens, int T, KVCache& cache, LogitRows rows) override;
  // Batched decoding: B independent sequences take one token each, tokens[b] continuing the
  // sequence in *caches[b] (at position caches[b]->length, which then grows by one), in one
  // forward pass. logits() are (B, V), row b computed as forward(&tokens[b], 1, *caches[b]) would.
  void forward_rows(const int* tokens, int B, KVCache* const* caches) override;
  KVCache new_cache() const override;  // K/V heads per layer: shape().kv_heads()
  int vocab_size() const override { return shape().vocab_size; }
  int context_length() const override { return shape().block_size; }

  const float* logits() const override;  // (B, T, V) of the last forward without targets
  int last_rows() const { return last_.rows(); }  // B·T of the last forward
  const float* losses() const;  // (B, T) per-position losses of the last forward with targets
  // Attention probabilities of layer l in the last forward (one without a KV cache): (B, H, T, T).
  // The forward pass does not keep them; each call recomputes them from the layer's saved
  // projections into a buffer that stays valid until the next call.
  const float* attention(int layer) override;

  // Self-attention (nn/tasks.h): the text's tokens, causal; query heads may share K/V heads.
  int attention_layers() const override { return shape().n_layer; }
  int attention_heads() const override { return shape().n_head; }
  int kv_heads() const override { return shape().kv_heads(); }
  bool causal() const override { return true; }
  AttentionRow attention_row(const Tokenizer& tokenizer, const std::string& text, const std::string& field) const override;
  void attend(const std::vector<int>& ids) override;
  std::string axis_label(const Tokenizer& tokenizer, int id) const override;

 protected:
  using Layers = DecoderLayers;
  friend LayeredModel;
  // A replica: the same layers, the parameter values of `shared` (a kind's class makes its own).
  CausalDecoder(std::shared_ptr<const Layers> layers, const ParameterSet& shared);

 private:
  float run_forward(const int* tokens, const int* targets, const LayerPass& pass);

  Activations acts_;
  // The last forward: what backward and the accessors read.
  LayerPass last_{};
  const int* tokens_ = nullptr;
  const int* targets_ = nullptr;
  const float* input_ = nullptr;   // the embedding's output, the blocks' input
  const float* output_ = nullptr;  // the blocks' output, the head's input
  bool has_forward_ = false;  // with targets, so backward may run
  std::vector<float> attention_map_, attention_scratch_;
};

}  // namespace potop
