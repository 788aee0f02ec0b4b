// Decoder-only GPT, one client of the model contract (model.h), composed of the shared layers:
//
//   x      = dropout(wte[tokens] + positions)          EmbeddingLayer
//   h      = blocks(x): per block, Add & Norm around   ResidualStack of
//              masked multi-head self-attention,         AttentionLayer (causal)
//              then the feed-forward MLP                 MlpLayer
//   logits = h · wteᵀ; loss = cross-entropy            TiedLMHead
//
// with pre-LN (GPT-2, a final LayerNorm ln_f) or post-LN (the paper) Add & Norm, GELU or ReLU,
// learned or sinusoidal positions, and GPT-2's initialisation: N(0, 0.02) for matrices and
// embeddings, N(0, 0.02/√(2·n_layer)) for the projections into the residual stream, zero
// biases, unit LayerNorm gains — each a rule in the tensor's spec. Parameters follow the Hugging
// Face GPT-2 names and layout (h.0.attn.c_attn.weight stored (in, out), ...).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "models/gpt/gpt_config.h"
#include "nn/activations.h"
#include "nn/kv_cache.h"
#include "nn/layer.h"
#include "nn/layered_model.h"
#include "nn/model.h"
#include "nn/tasks.h"

namespace potop {

struct GPTLayers;  // the architecture (gpt.cpp)

class GPT final : public LayeredModel<GPT, GPTLayers>, public CausalLM, public SelfAttention {
 public:
  explicit GPT(const GPTConfig& config);  // parameters zero: init_weights, or load them
  // What GPT(config) and reserve(shape) would allocate, computed from the same layouts without
  // allocating anything (the memory check before a run).
  static MemoryPlan plan(const GPTConfig& config, const BatchShape& shape);
  // The names, shapes, init rules and decay flags of GPT(config)'s parameters, in checkpoint
  // order, without allocating them.
  static Layout parameter_layout(const GPTConfig& config);

  const GPTConfig& config() const;

  // The model contract.
  void reserve(const BatchShape& shape) override;
  float forward(const Batch& batch, const Pass& pass) override;
  void backward(float loss_scale) override;
  MemoryPlan memory_plan(const BatchShape& shape) const override { return plan(config(), shape); }

  // Generation: tokens (1, T) continue the sequence whose keys and values the cache holds
  // (cache.length positions), and are appended to it. No dropout, no loss. logits() are (T, V),
  // or the last position's (1, V) with LogitRows::kLast.
  void forward(const int* tokens, int T, KVCache& cache, LogitRows rows) override;
  // Batched decoding: B independent sequences take one token each, tokens[b] continuing the
  // sequence in *caches[b] (at position caches[b]->length, which then grows by one), in one
  // forward pass. logits() are (B, V), row b computed as forward(&tokens[b], 1, *caches[b]) would.
  void forward_rows(const int* tokens, int B, KVCache* const* caches) override;
  KVCache new_cache() const override;
  int vocab_size() const override { return config().vocab_size; }
  int context_length() const override { return config().block_size; }

  const float* logits() const override;  // (B, T, V) of the last forward without targets
  int last_rows() const { return last_.rows(); }  // B·T of the last forward
  const float* losses() const;  // (B, T) per-position losses of the last forward with targets
  // Attention probabilities of layer l in the last forward (one without a KV cache): (B, H, T, T).
  // The forward pass does not keep them; each call recomputes them from the layer's saved
  // projections into a buffer that stays valid until the next call.
  const float* attention(int layer) override;

  // Self-attention (nn/tasks.h): the text's tokens, causal.
  int attention_layers() const override { return config().n_layer; }
  int attention_heads() const override { return config().n_head; }
  bool causal() const override { return true; }
  AttentionRow attention_row(const Tokenizer& tokenizer, const std::string& text, const std::string& field) const override;
  void attend(const std::vector<int>& ids) override;
  std::string axis_label(const Tokenizer& tokenizer, int id) const override;

 private:
  using Layers = GPTLayers;
  friend LayeredModel;
  explicit GPT(std::shared_ptr<const Layers> layers, const ParameterSet& shared);
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
