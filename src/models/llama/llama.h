// A Llama-style decoder (Touvron et al. 2023), one client of the model contract (nn/model.h):
//
//   x      = embed_tokens[tokens]                      no position table: positions are rotary
//   h      = blocks(x): per block, pre-norm residuals  RmsResidualStack of
//              x ← x + attn(RMSNorm(x))                  LlamaAttention: causal, grouped-query
//                                                        (n_kv_head K/V heads), RoPE on Q and K
//              x ← x + mlp(RMSNorm(x))                   SwiGluMlp: down(silu(gate(x)) ⊙ up(x))
//            then RMSNorm_final
//   logits = h · Wᵀ, W = embed_tokens (tied) or lm_head; loss = cross-entropy      TiedLMHead
//
// No biases anywhere. Initialisation as the GPT's: N(0, 0.02), the projections into the residual
// stream N(0, 0.02/√(2·n_layer)), unit norm gains. Parameters use Hugging Face's LlamaForCausalLM
// names (model.layers.<l>.self_attn.o_proj.weight, ...), stored (in, out) like every potop
// matrix, with q/k/v_proj fused into qkv_proj and gate/up_proj into gate_up_proj.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "models/llama/llama_config.h"
#include "nn/activations.h"
#include "nn/kv_cache.h"
#include "nn/layer.h"
#include "nn/layered_model.h"
#include "nn/model.h"
#include "nn/tasks.h"

namespace potop {

struct LlamaLayers;  // the architecture (llama.cpp)

class Llama final : public LayeredModel<Llama, LlamaLayers>, public CausalLM, public SelfAttention {
 public:
  explicit Llama(const LlamaConfig& config);  // a resolved config; parameters zero: init_weights, or load them
  static MemoryPlan plan(const LlamaConfig& config, const BatchShape& shape);
  static Layout parameter_layout(const LlamaConfig& config);

  const LlamaConfig& config() const;

  // The model contract.
  void reserve(const BatchShape& shape) override;
  float forward(const Batch& batch, const Pass& pass) override;
  void backward(float loss_scale) override;
  MemoryPlan memory_plan(const BatchShape& shape) const override { return plan(config(), shape); }

  // Causal LM (nn/tasks.h): its KV cache holds n_kv_head heads per layer.
  void forward(const int* tokens, int T, KVCache& cache, LogitRows rows) override;
  void forward_rows(const int* tokens, int B, KVCache* const* caches) override;
  KVCache new_cache() const override;
  int vocab_size() const override { return config().vocab_size; }
  int context_length() const override { return config().block_size; }
  const float* logits() const override;  // (B·T, V) of the last forward without targets
  const float* losses() const;           // (B·T) per-position losses of the last forward with targets

  // Self-attention (nn/tasks.h): the text's tokens, causal; query heads share K/V heads.
  int attention_layers() const override { return config().n_layer; }
  int attention_heads() const override { return config().n_head; }
  int kv_heads() const override { return config().n_kv_head; }
  bool causal() const override { return true; }
  AttentionRow attention_row(const Tokenizer& tokenizer, const std::string& text, const std::string& field) const override;
  void attend(const std::vector<int>& ids) override;
  std::string axis_label(const Tokenizer& tokenizer, int id) const override;
  const float* attention(int layer) override;  // (B, H, T, T) of the last forward without a cache

 private:
  using Layers = LlamaLayers;
  friend LayeredModel;
  explicit Llama(std::shared_ptr<const Layers> layers, const ParameterSet& shared);
  float run_forward(const int* tokens, const int* targets, const LayerPass& pass);

  Activations acts_;
  LayerPass last_{};
  const int* tokens_ = nullptr;
  const int* targets_ = nullptr;
  const float* input_ = nullptr;   // the embedding, the blocks' input
  const float* output_ = nullptr;  // the blocks' output, the head's input
  bool has_forward_ = false;
  std::vector<float> attention_map_, attention_scratch_;
};

}  // namespace potop
