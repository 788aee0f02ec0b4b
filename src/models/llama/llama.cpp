// The Llama: its layers are built once per config and shared by every replica; a forward pass is
// the embedding, the blocks and the head, and the backward pass the same list reversed.
#include "models/llama/llama.h"

#include <cmath>

#include "core/error.h"
#include "core/profile.h"
#include "kernels/embedding.h"
#include "models/llama/llama_attention.h"
#include "models/llama/rms_residual_stack.h"
#include "models/llama/swiglu_mlp.h"
#include "nn/lm_head.h"
#include "report/attention_map.h"

namespace potop {

namespace {

LlamaConfig checked(const LlamaConfig& c) {
  c.validate("llama config");
  return c;
}

}  // namespace

struct LlamaLayers {
  explicit LlamaLayers(const LlamaConfig& c);

  LlamaConfig config;
  LayerBuilder built;
  ParamId embed_tokens;
  BufferId embedding;  // kept: the blocks' input
  RmsResidualStack blocks;
  std::vector<const LlamaAttention*> attention;  // block l's, for pictures
  ParamId lm_head = kNoParam;                    // untied: the output head's own table
  TiedLMHead head;

  ParamId output_table() const { return lm_head != kNoParam ? lm_head : embed_tokens; }
};

LlamaLayers::LlamaLayers(const LlamaConfig& c)
    : config(checked(c)),
      embed_tokens(built.param("model.embed_tokens.weight", {c.vocab_size, c.n_embd}, TensorInit::normal(0.02), true)),
      embedding(built.acts.keep("embedding", c.n_embd)),
      blocks(built, c.n_embd, c.norm_eps),
      head([&] {
        // Checkpoint order is Hugging Face's: the embedding, the blocks, the final norm, lm_head.
        const double residual_std = 0.02 / std::sqrt(2.0 * c.n_layer);
        for (int l = 0; l < c.n_layer; ++l) {
          const std::string p = "model.layers." + std::to_string(l) + ".";
          const ParamId in_norm = RmsResidualStack::norm_weight(built, p + "input_layernorm.weight", c.n_embd);
          auto attn = std::make_unique<LlamaAttention>(
              built, p + "self_attn", LlamaAttentionConfig{c.n_embd, c.n_head, c.n_kv_head, c.rope_theta, residual_std});
          attention.push_back(attn.get());
          blocks.add(built, in_norm, std::move(attn));
          const ParamId post_norm =
              RmsResidualStack::norm_weight(built, p + "post_attention_layernorm.weight", c.n_embd);
          blocks.add(built, post_norm, std::make_unique<SwiGluMlp>(built, p + "mlp", c.n_embd, c.ffn_hidden, residual_std));
        }
        blocks.set_final_norm(built, RmsResidualStack::norm_weight(built, "model.norm.weight", c.n_embd));
        if (!c.tie_embeddings)
          lm_head = built.param("lm_head.weight", {c.vocab_size, c.n_embd}, TensorInit::normal(0.02), true);
        return TiedLMHead(built, output_table(), c.vocab_size, c.n_embd);
      }()) {}

Llama::Llama(const LlamaConfig& config) : LayeredModel(std::make_shared<const Layers>(config)) {
  acts_ = Activations(layers_, layers_->built.acts);
}

Llama::Llama(std::shared_ptr<const Layers> layers, const ParameterSet& shared)
    : LayeredModel(std::move(layers), shared) {
  acts_ = Activations(layers_, layers_->built.acts);
}

const LlamaConfig& Llama::config() const { return layers_->config; }

MemoryPlan Llama::plan(const LlamaConfig& config, const BatchShape& shape) {
  // A training step's: its loss-only passes keep one chunk of a large vocabulary's logits.
  const int64_t rows = int64_t{shape.B} * shape.T;
  return token_rows_plan(Layers(config), shape, double(TiedLMHead::kept_rows(rows, config.vocab_size, true)));
}

Layout Llama::parameter_layout(const LlamaConfig& config) { return Layers(config).built.params; }

void Llama::reserve(const BatchShape& shape) {
  POTOP_CHECK(shape.B > 0 && shape.T > 0 && shape.T <= config().block_size, "batch shape out of range");
  acts_.reserve(int64_t{shape.B} * shape.T);
  has_forward_ = false;
}

float Llama::run_forward(const int* tokens, const int* targets, const LayerPass& pass) {
  const profile::Scope scope("forward");
  const Layers& L = *layers_;
  POTOP_CHECK(pass.pos0 + pass.T <= config().block_size, "context longer than block_size");
  reserve({pass.B, pass.T});
  last_ = pass;
  tokens_ = tokens, targets_ = targets;
  const Frame f{params_, acts_};
  float* x = f.buffer(L.embedding);
  POTOP_PROFILED("embedding", embedding_forward(x, tokens, f.value(L.embed_tokens), nullptr, pass.B, pass.T,
                                                config().n_embd));  // x = embed_tokens[tokens]
  input_ = x;
  output_ = L.blocks.forward(x, pass, f);                                  // h = blocks(x)
  const float loss = L.head.forward(output_, targets, pass, f, counted_);  // logits = h·Wᵀ; loss
  has_forward_ = targets != nullptr;
  return loss;
}

float Llama::forward(const Batch& batch, const Pass& pass) {
  LayerPass p;
  p.B = batch.B, p.T = batch.T;
  p.dropout = pass.training ? config().dropout : 0.0f;
  p.loss_only = batch.targets != nullptr;  // logits() are read after passes without targets
  p.dropout_seed = pass.dropout_seed;
  return run_forward(batch.tokens, batch.targets, p);
}

void Llama::forward(const int* tokens, int T, KVCache& cache, LogitRows rows) {
  LayerPass p;
  p.B = 1, p.T = T, p.pos0 = cache.length, p.cache = &cache;
  p.last_row_logits = rows == LogitRows::kLast;
  run_forward(tokens, nullptr, p);
  cache.length += T;
}

void Llama::forward_rows(const int* tokens, int B, KVCache* const* caches) {
  for (int b = 0; b < B; ++b)
    POTOP_CHECK(caches[b]->length < config().block_size, "context longer than block_size");
  LayerPass p;
  p.B = B, p.T = 1, p.caches = caches;
  run_forward(tokens, nullptr, p);
  for (int b = 0; b < B; ++b) ++caches[b]->length;
}

KVCache Llama::new_cache() const {
  const LlamaConfig& c = config();
  return KVCache(layers_->built.cache_slots, c.block_size, c.n_kv_head, c.head_size(), kv_cache_type());
}

void Llama::backward(float loss_scale) {
  const profile::Scope scope("backward");
  POTOP_CHECK(has_forward_, "backward() needs a forward() with targets first");
  const Layers& L = *layers_;
  params_.grads();
  acts_.reserve_scratch();
  const Frame f{params_, acts_};
  const LayerPass& pass = last_;
  // logits = h·Wᵀ, into d h
  L.head.backward(L.blocks.output_grad(f), loss_scale, counted_, output_, targets_, pass, f);
  // h = blocks(x)
  const RmsResidualStack::InputGrad d = L.blocks.backward(input_, pass, f);
  // x = embed_tokens[tokens]
  POTOP_PROFILED("embedding", embedding_backward(f.grad(L.embed_tokens), nullptr, d.dx, tokens_, pass.B, pass.T,
                                                 config().n_embd));
}

const float* Llama::logits() const { return layers_->head.logits(acts_); }

const float* Llama::losses() const { return layers_->head.losses(acts_); }

AttentionRow Llama::attention_row(const Tokenizer& tokenizer, const std::string& text, const std::string& field) const {
  return {tokenizer.encode(text, field), false, 0};
}

void Llama::attend(const std::vector<int>& ids) { forward(Batch{{1, int(ids.size())}, ids.data(), nullptr}, Pass{}); }

std::string Llama::axis_label(const Tokenizer& tokenizer, int id) const { return token_label(tokenizer, id); }

const float* Llama::attention(int layer) {
  POTOP_CHECK(layer >= 0 && layer < config().n_layer && last_.B > 0 && !last_.cache && !last_.caches,
              "attention(): no such layer, or no forward without a cache yet");
  const int B = last_.B, T = last_.T, H = config().n_head;
  attention_map_.resize(size_t(B) * H * T * T);
  layers_->attention[layer]->probabilities(attention_map_.data(), attention_scratch_, last_, Frame{params_, acts_});
  return attention_map_.data();
}

}  // namespace potop
