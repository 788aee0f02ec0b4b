// The decoder: its layers are built once per shape (DecoderLayers) and shared by every replica; a
// forward pass is the body (embedding and blocks) and the head, in that order, and the backward
// pass the same list reversed.
#include "models/decoder/causal_decoder.h"

#include <algorithm>

#include "core/error.h"
#include "core/profile.h"
#include "nn/lm_head.h"
#include "nn/transformer_body.h"
#include "report/attention_map.h"

namespace potop {

struct DecoderLayers {
  explicit DecoderLayers(const BodyConfig& c);

  BodyConfig shape;
  LayerBuilder built;  // what the layers below declared: the parameter layout, the activation plan
  TransformerBody body;
  ParamId lm_head = kNoParam;  // untied: the output head's own table
  TiedLMHead head;

  ParamId output_table() const { return lm_head != kNoParam ? lm_head : body.embed.token_table(); }
};

DecoderLayers::DecoderLayers(const BodyConfig& c)
    : shape(c),
      body(built, c),
      // Checkpoint order is Hugging Face's: the body, then lm_head.
      lm_head(c.tie_embeddings ? kNoParam
                               : built.param(c.names.lm_head, {c.vocab_size, c.n_embd}, TensorInit::normal(0.02), true)),
      head(built, output_table(), c.vocab_size, c.n_embd) {
  POTOP_CHECK(c.causal, "a decoder's attention is causal");
}

CausalDecoder::CausalDecoder(const BodyConfig& shape) : LayeredModel(std::make_shared<const Layers>(shape)) {
  acts_ = Activations(layers_, layers_->built.acts);
}

CausalDecoder::CausalDecoder(std::shared_ptr<const Layers> layers, const ParameterSet& shared)
    : LayeredModel(std::move(layers), shared) {
  acts_ = Activations(layers_, layers_->built.acts);
}

const BodyConfig& CausalDecoder::shape() const { return layers_->shape; }

MemoryPlan CausalDecoder::plan(const BodyConfig& shape, const BatchShape& batch) {
  // A training step's: its loss-only passes keep one chunk of a large vocabulary's logits.
  const int64_t rows = int64_t{batch.B} * batch.T;
  return token_rows_plan(Layers(shape), batch, double(TiedLMHead::kept_rows(rows, shape.vocab_size, true)));
}

Layout CausalDecoder::parameter_layout(const BodyConfig& shape) { return Layers(shape).built.params; }

void CausalDecoder::reserve(const BatchShape& batch) {
  POTOP_CHECK(batch.B > 0 && batch.T > 0 && batch.T <= shape().block_size, "batch shape out of range");
  acts_.reserve(int64_t{batch.B} * batch.T);
  has_forward_ = false;
}

float CausalDecoder::run_forward(const int* tokens, const int* targets, const LayerPass& pass) {
  const profile::Scope scope("forward");
  const Layers& L = *layers_;
  POTOP_CHECK(pass.pos0 + pass.T <= shape().block_size, "context longer than block_size");
  reserve({pass.B, pass.T});
  last_ = pass;
  tokens_ = tokens, targets_ = targets;
  const Frame f{params_, acts_};
  const TransformerBody::Output body = L.body.forward(tokens, pass, f);  // h = blocks(dropout(wte[tokens] + positions))
  input_ = body.x, output_ = body.h;
  const float loss = L.head.forward(output_, targets, pass, f, counted_);  // logits = h·Wᵀ; loss
  has_forward_ = targets != nullptr;
  return loss;
}

float CausalDecoder::forward(const Batch& batch, const Pass& pass) {
  LayerPass p;
  p.B = batch.B, p.T = batch.T;
  p.dropout = pass.training ? shape().dropout : 0.0f;
  p.loss_only = batch.targets != nullptr;  // logits() are read after passes without targets
  p.dropout_seed = pass.dropout_seed;
  return run_forward(batch.tokens, batch.targets, p);
}

void CausalDecoder::forward(const int* tokens, int T, KVCache& cache, LogitRows rows) {
  LayerPass p;
  p.B = 1, p.T = T, p.pos0 = cache.length, p.cache = &cache;
  p.last_row_logits = rows == LogitRows::kLast;
  run_forward(tokens, nullptr, p);
  cache.length += T;
}

void CausalDecoder::forward_rows(const int* tokens, int B, KVCache* const* caches) {
  for (int b = 0; b < B; ++b)
    POTOP_CHECK(caches[b]->length < shape().block_size, "context longer than block_size");
  LayerPass p;
  p.B = B, p.T = 1, p.caches = caches;
  run_forward(tokens, nullptr, p);
  for (int b = 0; b < B; ++b) ++caches[b]->length;
}

KVCache CausalDecoder::new_cache() const {
  const BodyConfig& c = shape();
  return KVCache(layers_->built.cache_slots, c.block_size, c.kv_heads(), c.head_size(), kv_cache_type());
}

void CausalDecoder::backward(float loss_scale) {
  const profile::Scope scope("backward");
  POTOP_CHECK(has_forward_, "backward() needs a forward() with targets first");
  const Layers& L = *layers_;
  params_.grads();
  acts_.reserve_scratch();
  const Frame f{params_, acts_};
  const LayerPass& pass = last_;
  // logits = h·Wᵀ, into d h
  L.head.backward(L.body.blocks.output_grad(f), loss_scale, counted_, output_, targets_, pass, f);
  // h = blocks(x), x = dropout(wte[tokens] + positions)
  L.body.backward(tokens_, input_, pass, f);
}

const float* CausalDecoder::logits() const { return layers_->head.logits(acts_); }

const float* CausalDecoder::losses() const { return layers_->head.losses(acts_); }

AttentionRow CausalDecoder::attention_row(const Tokenizer& tokenizer, const std::string& text,
                                          const std::string& field) const {
  return {tokenizer.encode(text, field), false, 0};
}

void CausalDecoder::attend(const std::vector<int>& ids) {
  forward(Batch{{1, int(ids.size())}, ids.data(), nullptr}, Pass{});
}

std::string CausalDecoder::axis_label(const Tokenizer& tokenizer, int id) const { return token_label(tokenizer, id); }

const float* CausalDecoder::attention(int layer) {
  POTOP_CHECK(layer >= 0 && layer < shape().n_layer && last_.B > 0 && !last_.cache && !last_.caches,
              "attention(): no such layer, or no forward without a cache yet");
  const int B = last_.B, T = last_.T, H = shape().n_head;
  attention_map_.resize(size_t(B) * H * T * T);
  layers_->body.attention[layer]->probabilities(attention_map_.data(), attention_scratch_, last_, Frame{params_, acts_});
  return attention_map_.data();
}

}  // namespace potop
