// The bag-of-words LM's forward pass is the formula of bow.h line by line; the backward pass is
// the same list reversed.
#include "models/bow/bow.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/profile.h"
#include "models/bow/additive_score.h"
#include "models/bow/bag_average.h"
#include "models/bow/dot_score.h"
#include "kernels/embedding.h"
#include "kernels/linear.h"
#include "nn/lm_head.h"

namespace potop {

struct BowLayers {
  explicit BowLayers(const BowConfig& c);

  BowConfig config;
  LayerBuilder built;
  ParamId wte = kNoParam;                                           // E (V, d)
  ParamId w_key = kNoParam, w_query = kNoParam, score_bias = kNoParam, v = kNoParam;  // additive
  ParamId log_idf = kNoParam;                                       // idf (V)
  ParamId head_weight = kNoParam, head_bias = kNoParam;             // C (V, F), c (V)
  BufferId x = -1, keys = -1, queries = -1, scores = -1, weights = -1, bag = -1, features = -1;
  BufferId dfeatures = -1, dx = -1, dbag = -1, dscores = -1, dkeys = -1, dqueries = -1;
  std::unique_ptr<TiedLMHead> head;
};

BowLayers::BowLayers(const BowConfig& c) : config(validated(c)) {
  const int V = c.vocab_size, d = c.n_embd, T = c.block_size, H = c.attn_hidden, F = c.features();
  LayerBuilder& b = built;
  wte = b.param("wte", {V, d}, TensorInit::normal(0.02), true);
  if (c.attention == BowAttention::kAdditive) {
    w_key = b.param("score.w_key", {d, H}, TensorInit::normal(0.02), true);
    w_query = b.param("score.w_query", {d, H}, TensorInit::normal(0.02), true);
    score_bias = b.param("score.bias", {H}, TensorInit::zeros(), false);
    v = b.param("score.v", {H}, TensorInit::normal(0.02), true);
  }
  // A table of constants, not a weight: no gradient ever reaches it, so AdamW leaves it as set.
  if (c.attention == BowAttention::kIdf) log_idf = b.param("bag.log_idf", {V}, TensorInit::zeros(), false);
  head_weight = b.param("head.weight", {V, F}, TensorInit::normal(0.02), true);
  head_bias = b.param("head.bias", {V}, TensorInit::zeros(), false);

  x = b.acts.keep("word vectors", d);
  features = b.acts.keep("features", F);
  dfeatures = b.acts.scratch("d features", F);
  dx = b.acts.scratch("d word vectors", d);
  if (c.has_bag()) {
    scores = b.acts.keep("scores", T);
    weights = b.acts.keep("attention weights", T);
    bag = b.acts.keep("bag", d);
    dbag = b.acts.scratch("d bag", d);
    dscores = b.acts.scratch("d scores", T);
  }
  if (c.attention == BowAttention::kAdditive) {
    keys = b.acts.keep("keys", H);
    queries = b.acts.keep("queries", H);
    dkeys = b.acts.scratch("d keys", H);
    dqueries = b.acts.scratch("d queries", H);
  }
  head = std::make_unique<TiedLMHead>(b, head_weight, V, F, head_bias);
}

BowLM::BowLM(const BowConfig& config) : LayeredModel(std::make_shared<const Layers>(config)) {
  acts_ = Activations(layers_, layers_->built.acts);
}

BowLM::BowLM(std::shared_ptr<const Layers> layers, const ParameterSet& shared)
    : LayeredModel(std::move(layers), shared) {
  acts_ = Activations(layers_, layers_->built.acts);
}

const BowConfig& BowLM::config() const { return layers_->config; }

MemoryPlan BowLM::plan(const BowConfig& config, const BatchShape& shape) {
  return token_rows_plan(Layers(config), shape);
}

Layout BowLM::parameter_layout(const BowConfig& config) { return Layers(config).built.params; }

void BowLM::set_idf(const std::vector<long>& document_frequency, long documents) {
  const Layers& L = *layers_;
  POTOP_CHECK(L.log_idf != kNoParam, "set_idf: not an idf model");
  POTOP_CHECK(document_frequency.size() == size_t(config().vocab_size), "set_idf: one count per word");
  float* table = params_.value(L.log_idf);
  for (size_t w = 0; w < document_frequency.size(); ++w)
    table[w] = static_cast<float>(std::log(std::log((1.0 + documents) / (1.0 + document_frequency[w])) + 1.0));
}

void BowLM::reserve(const BatchShape& shape) {
  POTOP_CHECK(shape.B > 0 && shape.T > 0 && shape.T <= config().block_size, "batch shape out of range");
  acts_.reserve(int64_t{shape.B} * shape.T);
  has_forward_ = false;
}

float BowLM::forward(const Batch& batch, const Pass&) {  // no dropout: Pass has nothing for it
  const profile::Scope scope("forward");
  const Layers& L = *layers_;
  const BowConfig& c = L.config;
  reserve({batch.B, batch.T});
  LayerPass pass;
  pass.B = batch.B, pass.T = batch.T;
  last_ = pass;
  tokens_ = batch.tokens, targets_ = batch.targets;
  const Frame f{params_, acts_};
  const int B = batch.B, T = batch.T, N = B * T, d = c.n_embd, H = c.attn_hidden, F = c.features();
  float* x = f.buffer(L.x);
  POTOP_PROFILED("embedding", embedding_forward(x, batch.tokens, f.value(L.wte), nullptr, B, T, d));  // x = E(w)
  float* features = f.buffer(L.features);
  if (c.has_bag()) {
    float* scores = f.buffer(L.scores);
    switch (c.attention) {
      case BowAttention::kMean:  // equal scores: uniform weights
        std::fill(scores, scores + size_t(N) * T, 0.0f);
        break;
      case BowAttention::kIdf: {  // s_tk = ln idf(w_k): α ∝ idf
        const float* log_idf = f.value(L.log_idf);
        for (int b = 0; b < B; ++b)
          for (int t = 0; t < T; ++t)
            for (int k = 0; k < T; ++k) scores[(size_t(b) * T + t) * T + k] = log_idf[batch.tokens[b * T + k]];
        break;
      }
      case BowAttention::kDot:  // s_tk = x_k·x_t / √d
        POTOP_PROFILED("dot score", dot_score_forward(scores, x, 1.0f / std::sqrt(float(d)), B, T, d));
        break;
      case BowAttention::kAdditive: {  // s_tk = v·tanh(x_k W_key + x_t W_query + b)
        float* keys = f.buffer(L.keys);
        float* queries = f.buffer(L.queries);
        POTOP_PROFILED("score keys", linear_forward(keys, x, f.value(L.w_key), nullptr, N, d, H));
        POTOP_PROFILED("score queries", linear_forward(queries, x, f.value(L.w_query), f.value(L.score_bias), N, d, H));
        POTOP_PROFILED("additive score", additive_score_forward(scores, keys, queries, f.value(L.v), B, T, H));
        break;
      }
      case BowAttention::kNone:
        break;
    }
    float* bag = f.buffer(L.bag);
    POTOP_PROFILED("bag average", bag_average_forward(bag, f.buffer(L.weights), scores, x, B, T, d));  // A = Σ α x
    for (int i = 0; i < N; ++i) {  // [x; A]
      std::memcpy(features + size_t(i) * F, x + size_t(i) * d, sizeof(float) * size_t(d));
      std::memcpy(features + size_t(i) * F + d, bag + size_t(i) * d, sizeof(float) * size_t(d));
    }
  } else {
    std::memcpy(features, x, sizeof(float) * size_t(N) * d);
  }
  const float loss = L.head->forward(features, batch.targets, pass, f, counted_);  // y = softmax(C·[x; A] + c)
  has_forward_ = batch.targets != nullptr;
  return loss;
}

void BowLM::backward(float loss_scale) {
  const profile::Scope scope("backward");
  POTOP_CHECK(has_forward_, "backward() needs a forward() with targets first");
  const Layers& L = *layers_;
  const BowConfig& c = L.config;
  params_.grads();
  acts_.reserve_scratch();
  const Frame f{params_, acts_};
  const int B = last_.B, T = last_.T, N = B * T, d = c.n_embd, H = c.attn_hidden, F = c.features();
  const float* x = f.buffer(L.x);
  float* dfeatures = f.buffer(L.dfeatures);
  L.head->backward(dfeatures, loss_scale, counted_, f.buffer(L.features), targets_, last_, f);
  float* dx = f.buffer(L.dx);
  if (c.has_bag()) {
    float* dbag = f.buffer(L.dbag);
    for (int i = 0; i < N; ++i)  // [x; A] -> d A
      std::memcpy(dbag + size_t(i) * d, dfeatures + size_t(i) * F + d, sizeof(float) * size_t(d));
    const bool learned_scores = c.attention == BowAttention::kDot || c.attention == BowAttention::kAdditive;
    float* dscores = learned_scores ? f.buffer(L.dscores) : nullptr;
    // A = Σ α x: d x through the bag, and d scores (both buffers hold nothing yet: overwritten)
    POTOP_PROFILED("bag average", bag_average_backward(dx, dscores, dbag, f.buffer(L.weights), x, B, T, d,
                                                       GradStore::kOverwrite));
    for (int i = 0; i < N; ++i)  // [x; A] -> d x, as well
      for (int j = 0; j < d; ++j) dx[size_t(i) * d + j] += dfeatures[size_t(i) * F + j];
    if (c.attention == BowAttention::kDot) {
      POTOP_PROFILED("dot score", dot_score_backward(dx, dscores, x, 1.0f / std::sqrt(float(d)), B, T, d));
    } else if (c.attention == BowAttention::kAdditive) {
      float* dkeys = f.buffer(L.dkeys);
      float* dqueries = f.buffer(L.dqueries);
      POTOP_PROFILED("additive score",
                     additive_score_backward(dkeys, dqueries, f.grad(L.v), dscores, f.buffer(L.keys),
                                             f.buffer(L.queries), f.value(L.v), B, T, H, GradStore::kOverwrite));
      POTOP_PROFILED("score keys", linear_backward(dx, f.grad(L.w_key), nullptr, dkeys, x, f.value(L.w_key), N, d, H));
      POTOP_PROFILED("score queries", linear_backward(dx, f.grad(L.w_query), f.grad(L.score_bias), dqueries, x,
                                                      f.value(L.w_query), N, d, H));
    }
  } else {
    std::memcpy(dx, dfeatures, sizeof(float) * size_t(N) * d);
  }
  POTOP_PROFILED("embedding", embedding_backward(f.grad(L.wte), nullptr, dx, tokens_, B, T, d));
}

const float* BowLM::attention_weights() const {
  return layers_->config.has_bag() ? acts_[layers_->weights] : nullptr;
}

const float* BowLM::losses() const { return layers_->head->losses(acts_); }

const float* BowLM::logits() const { return layers_->head->logits(acts_); }

}  // namespace potop
