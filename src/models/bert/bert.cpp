// BERT: the GPT's body without the look-ahead mask, and a masked-LM head over the masked rows.
// Forward is body, gather, head; backward is that list reversed.
#include "models/bert/bert.h"

#include <string>

#include "core/error.h"
#include "core/profile.h"
#include "kernels/pool_rows.h"
#include "models/bert/mlm_transform.h"
#include "nn/lm_head.h"
#include "nn/transformer_body.h"

namespace potop {

struct BertLayers {
  explicit BertLayers(const BertConfig& c);

  BertConfig config;
  LayerBuilder built;       // the parameter layout; built.acts is the head's plan (M rows)
  ActivationPlan body_acts;  // the body's (B·T rows)
  TransformerBody body;
  BufferId picked, d_picked;  // the masked rows of h (M, C), and their gradient
  std::unique_ptr<MlmTransform> transform;  // with config.mlm_transform
  BufferId d_transformed;                   // d of its output (M, C)
  std::unique_ptr<TiedLMHead> head;
};

BertLayers::BertLayers(const BertConfig& c)
    : config(validated(c)), body(built, c, /*causal=*/false) {
  body_acts = std::move(built.acts);  // what follows runs on the masked rows only
  built.acts = ActivationPlan();
  picked = built.acts.keep("masked rows", c.n_embd);
  d_picked = built.acts.scratch("d masked rows", c.n_embd);
  if (c.mlm_transform) {
    transform = std::make_unique<MlmTransform>(built, c);
    d_transformed = built.acts.scratch("d mlm transform output", c.n_embd);
  }
  const ParamId bias = built.param("lm_head.bias", {c.vocab_size}, TensorInit::zeros(), false);
  head = std::make_unique<TiedLMHead>(built, body.embed.token_table(), c.vocab_size, c.n_embd, bias);
}

Bert::Bert(const BertConfig& config) : LayeredModel(std::make_shared<const Layers>(config)) { bind_activations(); }

Bert::Bert(std::shared_ptr<const Layers> layers, const ParameterSet& shared) : LayeredModel(std::move(layers), shared) {
  bind_activations();
}

void Bert::bind_activations() {
  acts_ = Activations(layers_, layers_->body_acts);
  head_acts_ = Activations(layers_, layers_->built.acts);
}

const BertConfig& Bert::config() const { return layers_->config; }

MemoryPlan Bert::plan(const BertConfig& config, const BatchShape& shape) {
  const Layers layers(config);
  const double rows = double(shape.B) * shape.T;
  MemoryPlan plan;
  plan.add_parameters(layers.built.params);
  plan.add_activations(layers.body_acts, rows);
  // At most every position is masked: the bound the check needs whatever --mask-fraction is.
  plan.add_activations(layers.built.acts, rows, 0, "masked-LM head ");
  return plan;
}

Layout Bert::parameter_layout(const BertConfig& config) { return Layers(config).built.params; }

void Bert::reserve(const BatchShape& shape) {
  POTOP_CHECK(shape.B > 0 && shape.T > 0 && shape.T <= config().block_size, "batch shape out of range");
  acts_.reserve(int64_t{shape.B} * shape.T);
  has_forward_ = false;
}

float Bert::forward(const Batch& batch, const Pass& pass) {
  const profile::Scope scope("forward");
  const Layers& L = *layers_;
  reserve(batch);
  LayerPass p;
  p.B = batch.B, p.T = batch.T, p.lengths = batch.lengths;
  p.dropout = pass.training ? config().dropout : 0.0f;
  p.dropout_seed = pass.dropout_seed;
  last_ = p;
  tokens_ = batch.tokens;
  const Frame f{params_, acts_};
  const TransformerBody::Output body = L.body.forward(batch.tokens, p, f);  // h = blocks(dropout(wte[x] + wpe))
  input_ = body.x, output_ = body.h;
  masked_.clear(), masked_targets_.clear();
  counted_ = 0;
  has_forward_ = batch.targets != nullptr;
  if (!batch.targets) return 0.0f;
  for (int i = 0; i < p.rows(); ++i)
    if (batch.targets[i] >= 0) masked_.push_back(i), masked_targets_.push_back(batch.targets[i]);
  if (masked_.empty()) return 0.0f;
  const int M = static_cast<int>(masked_.size());
  head_acts_.reserve(M);
  head_pass_ = LayerPass{};
  head_pass_.B = M, head_pass_.T = 1;
  const Frame hf{params_, head_acts_};
  float* picked = hf.buffer(L.picked);
  gather_rows_forward(picked, output_, masked_.data(), M, config().n_embd);  // m = h[masked]
  picked_ = picked;
  head_in_ = L.transform ? L.transform->forward(picked, head_pass_, hf) : picked;  // t = LN(f(m·W + b)), or m
  return L.head->forward(head_in_, masked_targets_.data(), head_pass_, hf, counted_);  // t·wteᵀ + b; loss
}

void Bert::backward(float loss_scale) {
  const profile::Scope scope("backward");
  POTOP_CHECK(has_forward_, "backward() needs a forward() with targets first");
  if (masked_.empty()) return;  // no target, no gradient
  const Layers& L = *layers_;
  params_.grads();
  acts_.reserve_scratch();
  head_acts_.reserve_scratch();
  const Frame f{params_, acts_}, hf{params_, head_acts_};
  const int M = static_cast<int>(masked_.size());
  float* d_picked = hf.buffer(L.d_picked);
  // logits = t·wteᵀ + b, into d t; t = LN(f(m·W + b)) (or m), into d m
  if (L.transform) {
    float* d_t = hf.buffer(L.d_transformed);
    L.head->backward(d_t, loss_scale, counted_, head_in_, masked_targets_.data(), head_pass_, hf);
    L.transform->backward(d_picked, d_t, picked_, head_pass_, hf);
  } else {
    L.head->backward(d_picked, loss_scale, counted_, picked_, masked_targets_.data(), head_pass_, hf);
  }
  // m = h[masked], into d h (zero at the rows no head read)
  gather_rows_backward(L.body.blocks.output_grad(f), d_picked, masked_.data(), M, config().n_embd, last_.rows(),
                       GradStore::kOverwrite);
  // h = blocks(dropout(wte[x] + wpe))
  L.body.backward(tokens_, input_, last_, f);
}

BertSpecials bert_specials(const BertConfig& config, const Tokenizer& tokenizer) {
  const SpecialTokens t = tokenizer.specials();
  BertSpecials s;
  s.pad = t.pad >= 0 ? t.pad : kPadId, s.unk = t.unk;
  s.cls = t.bos >= 0 ? t.bos : kBosId, s.sep = t.eos >= 0 ? t.eos : kEosId;
  if (config.mask_in_vocab) {
    if (t.mask < 0) throw Error("the model's [MASK] is its tokenizer's (mask_in_vocab), and its " + tokenizer.kind() +
                                " tokenizer has none");
    s.mask = t.mask;
  } else {
    s.mask = config.vocab_size - 1;
    s.first_ordinary = kSpecialCount;  // potop's tokenizers: <pad> <bos> <eos> <unk> first
  }
  return s;
}

MaskingRule masking_rule(double fraction, const BertSpecials& s, const Tokenizer& tokenizer) {
  MaskingRule rule{fraction, s.mask, s.first_ordinary, tokenizer.size()};
  rule.cls_id = s.cls, rule.sep_id = s.sep, rule.pad_id = s.pad;
  return rule;
}

const float* Bert::logits() const { return layers_->head->logits(head_acts_); }

const float* Bert::attention(int layer) {
  POTOP_CHECK(layer >= 0 && layer < config().n_layer && last_.B > 0, "attention(): no such layer, or no forward yet");
  const int B = last_.B, T = last_.T, H = config().n_head;
  attention_map_.resize(size_t(B) * H * T * T);
  layers_->body.attention[layer]->probabilities(attention_map_.data(), attention_scratch_, last_, Frame{params_, acts_});
  return attention_map_.data();
}

}  // namespace potop
