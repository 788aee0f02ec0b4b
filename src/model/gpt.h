// Decoder-only GPT: token (+ position) embedding, n_layer Transformer blocks, a final LayerNorm
// (pre-LN only) and an LM head tied to the token embedding.
//
// Parameters follow the Hugging Face GPT-2 layout and names (wte.weight, h.0.attn.c_attn.weight
// stored (in, out), ...), so a checkpoint is a walk over one Layout. Parameters, gradients and
// activations each live in one Arena.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/arena.h"
#include "model/config.h"

namespace potop {

// Pointers to one block's tensors; the same struct views parameters or their gradients.
// Bias pointers are null in a model without biases.
struct BlockParams {
  float* ln1_w; float* ln1_b;        // (C)
  float* qkv_w; float* qkv_b;        // (C, 3C), (3C)   attn.c_attn
  float* attproj_w; float* attproj_b;  // (C, C), (C)   attn.c_proj
  float* ln2_w; float* ln2_b;        // (C)
  float* fc_w; float* fc_b;          // (C, 4C), (4C)   mlp.c_fc
  float* fcproj_w; float* fcproj_b;  // (4C, C), (C)    mlp.c_proj
};

struct GPTParams {
  float* wte;  // (V, C) token embedding, also the LM head
  float* wpe;  // (block_size, C) learned positions; null for sinusoidal
  std::vector<BlockParams> h;
  float* lnf_w; float* lnf_b;  // (C); null for post-LN, whose blocks end normalised
};

// Names and shapes of every parameter, in checkpoint order.
Layout gpt_parameter_layout(const GPTConfig& config);
// Pointers into an arena laid out by gpt_parameter_layout; absent tensors are null.
GPTParams bind_gpt_params(const GPTConfig& config, const Layout& layout, const Arena& arena);
// True for tensors AdamW decays (matrices and embeddings), false for biases and LayerNorm gains.
bool is_decayed_parameter(const TensorSpec& spec);

// What one block keeps from its forward pass for its backward pass. The projections' outputs
// are not kept (they only feed a residual add, whose backward needs nothing), nor are the
// attention probabilities (the backward pass recomputes them from att_stats).
struct BlockActivations {
  float* ln1; float* ln1_mean; float* ln1_rstd;  // (B,T,C), (B,T), (B,T)
  float* qkv;                                    // (B,T,3C)
  float* att_stats;                              // (B,H,T,2) softmax statistics (attention.h)
  float* atty;                                   // (B,T,C) attention output, heads concatenated
  float* res2;                                   // (B,T,C) x + attention
  float* ln2; float* ln2_mean; float* ln2_rstd;  // (B,T,C), (B,T), (B,T)
  float* fch; float* fch_act;                    // (B,T,4C) before and after the non-linearity
  float* res3;                                   // (B,T,C) res2 + MLP (pre-LN block output)
};

// Keys and values of every layer for the positions generated so far (batch 1), so that each
// new token costs one position's work: (n_layer, n_head, block_size, head_size) each, a head's
// keys one after another so that attending reads them front to back.
struct KVCache {
  explicit KVCache(const GPTConfig& config);
  std::vector<float> k, v;
  int length = 0;  // positions filled
};

class GPT {
 public:
  explicit GPT(const GPTConfig& config);  // parameters zero; call init_weights or load them
  // A replica: it reads `primary`'s parameters (the same memory, so every update shows) and has
  // its own gradients and activations, so replicas can run forward and backward side by side on
  // different rows of a batch (model/batch_parallel.h).
  static GPT replica_of(const GPT& primary);

  // GPT-2 initialisation: N(0, 0.02) for matrices and embeddings, N(0, 0.02/√(2·n_layer)) for
  // the two projections into the residual stream, zero biases, unit LayerNorm gains.
  void init_weights(uint64_t seed);

  const GPTConfig& config() const { return config_; }
  const Layout& layout() const { return layout_; }
  Arena& params() { return *params_; }
  const Arena& params() const { return *params_; }
  Arena& grads();  // allocated on first use
  size_t num_parameters() const { return layout_.count(); }

  // Forward pass on tokens (B,T), T <= block_size. With targets (B,T) (negative = ignore)
  // returns the mean cross-entropy over counted targets and keeps what backward needs;
  // without, returns 0. training=false disables dropout. With a cache (B = 1, no targets) the
  // tokens continue at position cache->length and their keys/values are appended to it.
  float forward(const int* tokens, const int* targets, int B, int T, bool training = false,
                uint64_t dropout_seed = 0, KVCache* cache = nullptr);
  // Gradients of loss_scale * (the last forward's mean loss), accumulated into grads().
  void backward(float loss_scale = 1.0f);
  void zero_grad();

  const float* logits() const { return logits_; }  // (B,T,V) of the last forward
  int last_rows() const { return B_ * T_; }         // B*T of the last forward
  const float* losses() const { return losses_; }  // (B,T) per-token losses of the last forward
  int counted_targets() const { return counted_; }
  // Attention probabilities of layer l in the last forward (one without a KV cache):
  // (B, H, T, T). The forward pass does not keep them; each call recomputes them from the
  // layer's saved q, k, v into a buffer that stays valid until the next call.
  const float* attention(int layer);

  // Bytes per named buffer: parameters, gradients, activations for the reserved (B,T).
  std::vector<std::pair<std::string, size_t>> memory_plan() const;
  // Sizes activation buffers for batches (B,T) attending over Tk keys (Tk only checked: no
  // buffer grows with it); reallocates only when the capacity must grow, so a training loop
  // allocates nothing after its first step.
  void reserve(int B, int T, int Tk);
  void reserve(int B, int T) { reserve(B, T, T); }

 private:
  GPT(const GPTConfig& config, std::shared_ptr<Arena> params);  // params null: a new zeroed arena
  void bind_scratch();
  const float* block_output(int l) const;  // the residual stream after block l
  const float* block_input(int l) const;

  GPTConfig config_;
  Layout layout_;
  std::shared_ptr<Arena> params_;  // shared with replicas
  Arena grads_;
  GPTParams p_{};
  GPTParams g_{};
  std::vector<float> sinusoid_;  // (block_size, C) when positions are sinusoidal

  // Activations for the reserved batch shape, one block.
  Layout act_layout_;
  Arena act_arena_;
  int B_ = 0, T_ = 0;
  int64_t capacity_rows_ = 0;
  float* encoded_ = nullptr;  // (B,T,C)
  std::vector<BlockActivations> acts_;
  float* proj_ = nullptr;  // (B,T,C) the current projection's output, before its residual add
  std::vector<float> attention_map_, attention_out_;  // for attention(): (B,H,T,T) and (B,T,C)
  float* lnf_ = nullptr; float* lnf_mean_ = nullptr; float* lnf_rstd_ = nullptr;
  float* logits_ = nullptr;  // (B,T,V)
  float* probs_ = nullptr;   // (B,T,V), reused as dlogits in backward
  float* losses_ = nullptr;  // (B,T)
  // Gradient scratch for the backward pass (only the current block's).
  Layout scratch_layout_;
  std::vector<size_t> scratch_ids_;
  Arena scratch_;
  float* dresidual_ = nullptr;  // (B,T,C) gradient flowing down the residual stream
  float* dbtc_ = nullptr;       // (B,T,C)
  float* dbtc2_ = nullptr;      // (B,T,C)
  float* dqkv_ = nullptr;       // (B,T,3C)
  float* dfch_ = nullptr;       // (B,T,4C) d of the activation's output, then of its input
  float* dlosses_ = nullptr;    // (B,T)

  const int* tokens_ = nullptr;
  const int* targets_ = nullptr;
  bool training_ = false;
  uint64_t dropout_seed_ = 0;
  int counted_ = 0;
  bool has_forward_ = false;
};

// Dropout seed of one call site (embedding, or a layer's attention / projections) for a step.
uint64_t dropout_site_seed(uint64_t step_seed, int site);

}  // namespace potop
