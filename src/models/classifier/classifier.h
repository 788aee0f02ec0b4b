// A text classifier: a Transformer body (a GPT's, a BERT's, or one trained from scratch), one
// vector per text pooled from its output, and a linear head over the classes — BERT's
// sequence classification ("a head on [CLS]") and GPT-1's (a head on the last token):
//
//   x      = dropout(wte[tokens] + positions)            TransformerBody: the GPT-2-shaped body,
//   h      = blocks(x)                                     causal or bidirectional (padding masked)
//   p_b    = h[b, 0]            (cls: [CLS])             gather_rows
//          | h[b, len_b - 1]    (last: the last token)
//          | mean_{t<len_b} h[b, t]   (mean)             mean_rows
//   p      = tanh(p · W_p + b_p)   with pooler (BERT's)   linear, bias_tanh
//   logits = dropout(p) · Wᵀ + c,   W (K, C), c (K)      TiedLMHead with its own table and bias
//   loss   = mean over the B texts of −log softmax(logits_b)[label_b]
//
// Parameters: the body's GPT-2 names (wte, wpe, h.<l>.*, ln_f), so a GPT's or a BERT's body
// loads by name, then pooler.weight (in, out) and pooler.bias with a pooler, classifier.weight and
// classifier.bias (Hugging Face's names). A Batch holds
// B rows of T tokens (padded), their lengths and one label per row. The body's buffers hold B·T
// rows and the head's B, so the two keep separate activation plans (as the encoder-decoder's
// encoder and decoder do). With freeze_encoder the backward pass stops at the pooled vector:
// the body's gradients stay zero.
#pragma once
#include <memory>
#include <vector>

#include "models/classifier/classifier_config.h"
#include "nn/activations.h"
#include "nn/layer.h"
#include "nn/layered_model.h"
#include "nn/model.h"
#include "nn/tasks.h"

namespace potop {

struct ClassifierLayers;  // the architecture (classifier.cpp)

class Classifier final : public LayeredModel<Classifier, ClassifierLayers>, public SequenceClassifier,
                         public SelfAttention {
 public:
  explicit Classifier(const ClassifierConfig& config);  // parameters zero: init_weights, or load them
  static MemoryPlan plan(const ClassifierConfig& config, const BatchShape& shape);
  static Layout parameter_layout(const ClassifierConfig& config);
  const ClassifierConfig& config() const;
  // The head's tensors (the pooler's, classifier.weight, classifier.bias): what --freeze-encoder trains.
  std::vector<ParamId> head_parameters() const;

  // The model contract. batch.labels null: logits only, no loss.
  void reserve(const BatchShape& shape) override;
  float forward(const Batch& batch, const Pass& pass) override;
  void backward(float loss_scale) override;
  MemoryPlan memory_plan(const BatchShape& shape) const override { return plan(config(), shape); }

  const float* logits() const;  // (B, K) of the last forward
  // Attention probabilities of layer l in the last forward: (B, H, T, T), recomputed as
  // GPT::attention does, valid until the next call.
  const float* attention(int layer) override;

  // What a classifier does (nn/tasks.h; classifier_tasks.cpp): texts encoded as in training.
  const std::vector<std::string>& labels() const override { return config().labels; }
  std::string pooling() const override;
  Classified classify(const Tokenizer& tokenizer, const std::vector<std::string>& texts, const std::string& field) override;
  int attention_layers() const override { return config().body.n_layer; }
  int attention_heads() const override { return config().body.n_head; }
  int context_length() const override { return config().body.block_size; }
  bool causal() const override { return config().causal; }
  // The focus is the row the head reads: [CLS], the last token (0 for mean pooling).
  AttentionRow attention_row(const Tokenizer& tokenizer, const std::string& text, const std::string& field) const override;
  void attend(const std::vector<int>& ids) override;
  std::string axis_label(const Tokenizer& tokenizer, int id) const override;

 private:
  using Layers = ClassifierLayers;
  friend LayeredModel;
  Classifier(std::shared_ptr<const Layers> layers, const ParameterSet& shared);
  void bind_activations();

  Activations body_acts_, head_acts_;
  // The last forward: what backward and the accessors read.
  LayerPass body_pass_{}, head_pass_{};
  const int* tokens_ = nullptr;
  const int* labels_ = nullptr;
  const float* x_ = nullptr;   // the body's input (the embedding's output)
  std::vector<int> rows_;      // cls / last: the row of h each text's vector is
  std::vector<int> lengths_;   // each text's length (T without Batch::lengths)
  bool has_forward_ = false;
  std::vector<float> attention_map_, attention_scratch_;
  int attended_length_ = 0;  // the row attend() read
};

}  // namespace potop
