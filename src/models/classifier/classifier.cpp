// The classifier: the body, the pooling and the head in that order, and backward the same list
// reversed (models/classifier/classifier.h has the formulas).
#include "models/classifier/classifier.h"

#include <algorithm>

#include "core/error.h"
#include "core/profile.h"
#include "kernels/activation.h"
#include "kernels/dropout.h"
#include "kernels/linear.h"
#include "kernels/pool_rows.h"
#include "nn/lm_head.h"
#include "nn/transformer_body.h"

namespace potop {

struct ClassifierLayers {
  explicit ClassifierLayers(const ClassifierConfig& c);

  ClassifierConfig config;
  LayerBuilder built;        // the parameter layout; built.acts is the head's plan (B rows)
  TransformerBody body;      // its buffers: body_acts (B·T rows)
  ActivationPlan body_acts;
  ParamId pooler_w = kNoParam, pooler_b = kNoParam;  // W_p (C, C), b_p (C), with a pooler
  BufferId pooler_pre = -1, pooler_out = -1, d_pooler_pre = -1, d_pooler_in = -1;
  ParamId weight = kNoParam, bias = kNoParam;  // W (K, C), c (K)
  BufferId pooled = -1, dropped = -1, d_pooled = -1, d_dropped = -1;
  int dropout_site = 0;
  std::unique_ptr<TiedLMHead> head;
};

ClassifierLayers::ClassifierLayers(const ClassifierConfig& c)
    : config(validated(c)), body(built, c.body, c.causal) {
  const int C = c.body.n_embd, K = c.n_classes();
  body_acts = std::move(built.acts);  // what follows runs on one row per text
  built.acts = ActivationPlan();
  if (c.pooler) {
    pooler_w = built.matrix("pooler.weight", C, C, TensorInit::normal(0.02));
    pooler_b = built.param("pooler.bias", {C}, TensorInit::zeros(), false);
    pooler_pre = built.acts.keep("pooler pre-activation", C);
    pooler_out = built.acts.keep("pooler output", C);
    d_pooler_pre = built.acts.scratch("d pooler pre-activation", C);
    d_pooler_in = built.acts.scratch("d pooler input", C);
  }
  weight = built.param("classifier.weight", {K, C}, TensorInit::normal(0.02), true);
  bias = built.param("classifier.bias", {K}, TensorInit::zeros(), false);
  pooled = built.acts.keep("pooled", C);
  dropped = built.acts.keep("pooled after dropout", C);
  d_pooled = built.acts.scratch("d pooled", C);
  d_dropped = built.acts.scratch("d pooled after dropout", C);
  dropout_site = built.claim_dropout_site();
  head = std::make_unique<TiedLMHead>(built, weight, K, C, bias);
}

Classifier::Classifier(const ClassifierConfig& config) : LayeredModel(std::make_shared<const Layers>(config)) {
  bind_activations();
}

Classifier::Classifier(std::shared_ptr<const Layers> layers, const ParameterSet& shared)
    : LayeredModel(std::move(layers), shared) {
  bind_activations();
}

void Classifier::bind_activations() {
  body_acts_ = Activations(layers_, layers_->body_acts);
  head_acts_ = Activations(layers_, layers_->built.acts);
}

const ClassifierConfig& Classifier::config() const { return layers_->config; }

std::vector<ParamId> Classifier::head_parameters() const {
  const Layers& L = *layers_;
  if (L.pooler_w != kNoParam) return {L.pooler_w, L.pooler_b, L.weight, L.bias};
  return {L.weight, L.bias};
}

MemoryPlan Classifier::plan(const ClassifierConfig& config, const BatchShape& shape) {
  const Layers layers(config);
  MemoryPlan plan;
  plan.add_parameters(layers.built.params);
  plan.add_activations(layers.body_acts, double(shape.B) * shape.T, 0, "body ");
  plan.add_activations(layers.built.acts, double(shape.B), 0, "head ");
  return plan;
}

Layout Classifier::parameter_layout(const ClassifierConfig& config) { return Layers(config).built.params; }

void Classifier::reserve(const BatchShape& shape) {
  POTOP_CHECK(shape.B > 0 && shape.T > 0 && shape.T <= config().body.block_size, "batch shape out of range");
  body_acts_.reserve(int64_t{shape.B} * shape.T);
  head_acts_.reserve(shape.B);
  has_forward_ = false;
}

float Classifier::forward(const Batch& batch, const Pass& pass) {
  const profile::Scope scope("forward");
  const Layers& L = *layers_;
  const ClassifierConfig& c = L.config;
  const int B = batch.B, T = batch.T, C = c.body.n_embd;
  reserve(batch);
  lengths_.resize(size_t(B));
  rows_.resize(size_t(B));
  for (int b = 0; b < B; ++b) {
    const int len = batch.lengths ? batch.lengths[b] : T;
    POTOP_CHECK(len >= 1 && len <= T, "a row's length is outside 1..T");
    lengths_[size_t(b)] = len;
    rows_[size_t(b)] = b * T + (c.pooling == Pooling::kLast ? len - 1 : 0);
  }
  LayerPass body;
  body.B = B, body.T = T;
  body.lengths = c.causal ? nullptr : lengths_.data();  // a causal row's padding comes after all it reads
  body.dropout = pass.training ? c.body.dropout : 0.0f;
  body.dropout_seed = pass.dropout_seed;
  LayerPass head = body;
  head.T = 1, head.lengths = nullptr;
  head.dropout = pass.training ? c.classifier_dropout : 0.0f;
  const Frame bf{params_, body_acts_}, hf{params_, head_acts_};
  tokens_ = batch.tokens, labels_ = batch.labels;
  const TransformerBody::Output out = L.body.forward(batch.tokens, body, bf);  // h = blocks(dropout(wte[tokens] + positions))
  x_ = out.x;
  float* pooled = hf.buffer(L.pooled);
  if (c.pooling == Pooling::kMean)
    POTOP_PROFILED("pool", mean_rows_forward(pooled, out.h, lengths_.data(), B, T, C));  // p_b = mean_t h[b, t]
  else
    POTOP_PROFILED("pool", gather_rows_forward(pooled, out.h, rows_.data(), B, C));  // p_b = h[rows_b]
  const float* p = pooled;
  if (c.pooler) {  // p = tanh(p·W_p + b_p)
    float *pre = hf.buffer(L.pooler_pre), *tanh_out = hf.buffer(L.pooler_out);
    POTOP_PROFILED("pooler", linear(hf, pre, pooled, L.pooler_w, kNoParam, B, C, C));
    POTOP_PROFILED("pooler", bias_tanh_forward(tanh_out, pre, hf.value(L.pooler_b), B, C));
    p = tanh_out;
  }
  float* dropped = hf.buffer(L.dropped);
  POTOP_PROFILED("dropout", dropout_forward(dropped, p, head.dropout, head.site_seed(L.dropout_site),
                                            size_t(B) * C));  // dropout(p)
  const float loss = L.head->forward(dropped, batch.labels, head, hf, counted_);  // logits = dropout(p)·Wᵀ + c; loss
  body_pass_ = body, head_pass_ = head;
  has_forward_ = batch.labels != nullptr;
  return loss;
}

void Classifier::backward(float loss_scale) {
  const profile::Scope scope("backward");
  POTOP_CHECK(has_forward_, "backward() needs a forward() with labels first");
  const Layers& L = *layers_;
  const ClassifierConfig& c = L.config;
  params_.grads();
  body_acts_.reserve_scratch();
  head_acts_.reserve_scratch();
  const Frame bf{params_, body_acts_}, hf{params_, head_acts_};
  const int B = body_pass_.B, T = body_pass_.T, C = c.body.n_embd;
  // logits = dropout(p)·Wᵀ + c, into d dropout(p)
  float* d_dropped = hf.buffer(L.d_dropped);
  L.head->backward(d_dropped, loss_scale, counted_, hf.buffer(L.dropped), labels_, head_pass_, hf);
  params_.grads_final_from(L.weight);
  // feature extraction: the body learns nothing, so nothing flows into it
  if (c.freeze_encoder && !c.pooler) return;
  // dropout(p), into d p
  const float* d_pooled = dropout_grad(hf.buffer(L.d_pooled), d_dropped, head_pass_, L.dropout_site, size_t(B) * C);
  if (c.pooler) {  // p = tanh(p₀·W_p + b_p), into d p₀
    float *d_pre = hf.buffer(L.d_pooler_pre), *d_in = hf.buffer(L.d_pooler_in);
    POTOP_PROFILED("pooler", bias_tanh_backward(d_pre, hf.grad(L.pooler_b), d_pooled, hf.buffer(L.pooler_pre), B, C,
                                                GradStore::kOverwrite));
    POTOP_PROFILED("pooler", linear_backward(d_in, hf.grad(L.pooler_w), nullptr, d_pre, hf.buffer(L.pooled),
                                             hf.value(L.pooler_w), B, C, C, WeightLayout::kInOut,
                                             GradStore::kOverwrite));
    params_.grads_final_from(L.pooler_w);
    if (c.freeze_encoder) return;
    d_pooled = d_in;
  }
  // p = pool(h), into d h (rows no text reads get zero)
  float* dh = L.body.blocks.output_grad(bf);
  if (c.pooling == Pooling::kMean)
    POTOP_PROFILED("pool", mean_rows_backward(dh, d_pooled, lengths_.data(), B, T, C, GradStore::kOverwrite));
  else
    POTOP_PROFILED("pool", gather_rows_backward(dh, d_pooled, rows_.data(), B, C, B * T, GradStore::kOverwrite));
  // h = blocks(x), x = dropout(wte[tokens] + positions)
  L.body.backward(tokens_, x_, body_pass_, bf);
}

const float* Classifier::logits() const { return layers_->head->logits(head_acts_); }

const float* Classifier::attention(int layer) {
  POTOP_CHECK(layer >= 0 && layer < config().body.n_layer && body_pass_.B > 0, "attention(): no such layer, or no forward yet");
  const int B = body_pass_.B, T = body_pass_.T, H = config().body.n_head;
  attention_map_.resize(size_t(B) * H * T * T);
  layers_->body.attention[layer]->probabilities(attention_map_.data(), attention_scratch_, body_pass_,
                                                Frame{params_, body_acts_});
  return attention_map_.data();
}

}  // namespace potop
