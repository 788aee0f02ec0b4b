// The GPT: its layers are built once per config (Layers) and shared by every replica; a forward
// pass is the embedding, the residual stack of blocks and the head, in that order, and the
// backward pass is the same list reversed.
#include "models/gpt/gpt.h"

#include <algorithm>

#include "core/error.h"
#include "core/profile.h"
#include "nn/lm_head.h"
#include "nn/transformer_body.h"
#include "report/attention_map.h"

namespace potop {

struct GPTLayers {
  explicit GPTLayers(const GPTConfig& c);

  GPTConfig config;
  LayerBuilder built;  // what the layers below declared: the parameter layout, the activation plan
  TransformerBody body;
  TiedLMHead head;
};

GPTLayers::GPTLayers(const GPTConfig& c)
    : config(validated(c)),
      body(built, c, /*causal=*/true),
      head(built, body.embed.token_table(), c.vocab_size, c.n_embd) {}

GPT::GPT(const GPTConfig& config) : LayeredModel(std::make_shared<const Layers>(config)) {
  acts_ = Activations(layers_, layers_->built.acts);
}

GPT::GPT(std::shared_ptr<const Layers> layers, const ParameterSet& shared)
    : LayeredModel(std::move(layers), shared) {
  acts_ = Activations(layers_, layers_->built.acts);
}

const GPTConfig& GPT::config() const { return layers_->config; }

MemoryPlan GPT::plan(const GPTConfig& config, const BatchShape& shape) {
  // A training step's: its loss-only passes keep one chunk of a large vocabulary's logits.
  const int64_t rows = int64_t{shape.B} * shape.T;
  return token_rows_plan(Layers(config), shape, double(TiedLMHead::kept_rows(rows, config.vocab_size, true)));
}

Layout GPT::parameter_layout(const GPTConfig& config) { return Layers(config).built.params; }

void GPT::reserve(const BatchShape& shape) {
  POTOP_CHECK(shape.B > 0 && shape.T > 0 && shape.T <= config().block_size, "batch shape out of range");
  acts_.reserve(int64_t{shape.B} * shape.T);
  has_forward_ = false;
}

float GPT::run_forward(const int* tokens, const int* targets, const LayerPass& pass) {
  const profile::Scope scope("forward");
  const Layers& L = *layers_;
  POTOP_CHECK(pass.pos0 + pass.T <= config().block_size, "context longer than block_size");
  reserve({pass.B, pass.T});
  last_ = pass;
  tokens_ = tokens, targets_ = targets;
  const Frame f{params_, acts_};
  const TransformerBody::Output body = L.body.forward(tokens, pass, f);  // h = blocks(dropout(wte[tokens] + positions))
  input_ = body.x, output_ = body.h;
  const float loss = L.head.forward(output_, targets, pass, f, counted_);  // logits = h·wteᵀ; loss
  has_forward_ = targets != nullptr;
  return loss;
}

float GPT::forward(const Batch& batch, const Pass& pass) {
  LayerPass p;
  p.B = batch.B, p.T = batch.T;
  p.dropout = pass.training ? config().dropout : 0.0f;
  p.loss_only = batch.targets != nullptr;  // logits() are read after passes without targets
  p.dropout_seed = pass.dropout_seed;
  return run_forward(batch.tokens, batch.targets, p);
}

void GPT::forward(const int* tokens, int T, KVCache& cache, LogitRows rows) {
  LayerPass p;
  p.B = 1, p.T = T, p.pos0 = cache.length, p.cache = &cache;
  p.last_row_logits = rows == LogitRows::kLast;
  run_forward(tokens, nullptr, p);
  cache.length += T;
}

void GPT::forward_rows(const int* tokens, int B, KVCache* const* caches) {
  for (int b = 0; b < B; ++b)
    POTOP_CHECK(caches[b]->length < config().block_size, "context longer than block_size");
  LayerPass p;
  p.B = B, p.T = 1, p.caches = caches;
  run_forward(tokens, nullptr, p);
  for (int b = 0; b < B; ++b) ++caches[b]->length;
}

KVCache GPT::new_cache() const {
  return KVCache(layers_->built.cache_slots, config().block_size, config().n_head, config().n_embd / config().n_head,
                 kv_cache_type());
}

void GPT::backward(float loss_scale) {
  const profile::Scope scope("backward");
  POTOP_CHECK(has_forward_, "backward() needs a forward() with targets first");
  const Layers& L = *layers_;
  params_.grads();
  acts_.reserve_scratch();
  const Frame f{params_, acts_};
  const LayerPass& pass = last_;
  // logits = h·wteᵀ, into d h
  L.head.backward(L.body.blocks.output_grad(f), loss_scale, counted_, output_, targets_, pass, f);
  // h = blocks(x), x = dropout(wte[tokens] + positions)
  L.body.backward(tokens_, input_, pass, f);
}

const float* GPT::logits() const { return layers_->head.logits(acts_); }

const float* GPT::losses() const { return layers_->head.losses(acts_); }

AttentionRow GPT::attention_row(const Tokenizer& tokenizer, const std::string& text, const std::string& field) const {
  return {tokenizer.encode(text, field), false, 0};
}

void GPT::attend(const std::vector<int>& ids) { forward(Batch{{1, int(ids.size())}, ids.data(), nullptr}, Pass{}); }

std::string GPT::axis_label(const Tokenizer& tokenizer, int id) const { return token_label(tokenizer, id); }

const float* GPT::attention(int layer) {
  POTOP_CHECK(layer >= 0 && layer < config().n_layer && last_.B > 0 && !last_.cache && !last_.caches,
              "attention(): no such layer, or no forward without a cache yet");
  const int B = last_.B, T = last_.T, H = config().n_head;
  attention_map_.resize(size_t(B) * H * T * T);
  layers_->body.attention[layer]->probabilities(attention_map_.data(), attention_scratch_, last_, Frame{params_, acts_});
  return attention_map_.data();
}

}  // namespace potop
