// The bigram + attention bag-of-words language model of the lectures, a client of the model
// contract (model.h) like the GPT. Row b of a batch is a window of T words; position t holds the
// previous word w_{i-1} = tokens[t] and predicts targets[t] = w_i:
//
//   x_t   = E(tokens[t])                                     the word vectors (EmbeddingLayer's kernel)
//   s_tk  = score(x_k, x_t)   for the earlier words k < t    dot_score / additive_score, or fixed
//   α_t   = softmax_k(s_t·),  A_t = Σ_{k<t} α_tk x_k         bag_average (A_0 = 0: nothing before)
//   y_t   = softmax(C·[x_t; A_t] + c)                        TiedLMHead with its own table C and bias c
//
// The attention kinds (bow_config.h): none drops A (the plain bigram, y_t = softmax(C·x_t + c));
// mean uses equal scores; idf uses s_tk = log IDF(w_k), a fixed table ("bag.log_idf", carried by
// the checkpoint, never trained) so that α ∝ IDF; dot uses x_k·x_t/√d; additive uses
// v·tanh(x_k W_key + x_t W_query + b). The window is the only context: a word at position 0 of
// a row sees no earlier word, as a sentence's second word sees only the first.
#pragma once
#include <memory>
#include <vector>

#include "nn/activations.h"
#include "models/bow/bow_config.h"
#include "nn/layer.h"
#include "nn/layered_model.h"
#include "nn/model.h"
#include "nn/tasks.h"

namespace potop {

struct BowLayers;  // the architecture (bow.cpp)

class BowLM final : public LayeredModel<BowLM, BowLayers>, public WordAttention {
 public:
  explicit BowLM(const BowConfig& config);  // parameters zero: init_weights, or load them
  static MemoryPlan plan(const BowConfig& config, const BatchShape& shape);
  static Layout parameter_layout(const BowConfig& config);

  // The idf model's fixed scores, set after init_weights, from document frequencies:
  // idf(w) = ln((1 + N) / (1 + df(w))) + 1 (smoothed, so always >= 1), stored as ln idf(w).
  // Needs attention idf.
  void set_idf(const std::vector<long>& document_frequency, long documents);
  const BowConfig& config() const;

  // The model contract.
  void reserve(const BatchShape& shape) override;
  float forward(const Batch& batch, const Pass& pass) override;
  void backward(float loss_scale) override;
  MemoryPlan memory_plan(const BatchShape& shape) const override { return plan(config(), shape); }

  // Of the last forward: the attention weights α (B, T, T), row t over the positions k < t (zero
  // elsewhere; all zero for none), and the per-position losses (B, T).
  const float* attention_weights() const override;
  const float* losses() const override;

  // Its weights on the earlier words (nn/tasks.h).
  int window() const override { return config().block_size; }
  std::string scoring() const override { return to_string(config().attention); }
  bool attends() const override { return config().has_bag(); }
  void attend(const int* ids, const int* targets, int T) override { forward(Batch{{1, T}, ids, targets}, Pass{}); }
  const float* logits() const;  // (B, T, V)

 private:
  using Layers = BowLayers;
  friend LayeredModel;
  BowLM(std::shared_ptr<const Layers> layers, const ParameterSet& shared);

  Activations acts_;
  LayerPass last_{};
  const int* tokens_ = nullptr;
  const int* targets_ = nullptr;
  bool has_forward_ = false;
};

}  // namespace potop
