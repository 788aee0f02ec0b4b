// BERT: a bidirectional Transformer encoder pre-trained as a masked language model (Devlin et al.,
// 2019), one client of the model contract (model.h) built from the GPT's body:
//
//   x      = dropout(wte[tokens] + positions)           EmbeddingLayer     } TransformerBody,
//   h      = blocks(x): Add & Norm around self-attention  ResidualStack      } not causal: every
//              that sees both sides (padding masked),                          token attends to
//              then the feed-forward MLP                                        the whole row
//   m      = h[masked positions]                         gather_rows
//   logits = m · wteᵀ + b; loss = cross-entropy of the   TiedLMHead (+ bias)
//            original tokens at the masked positions
//
// The head reads only the masked positions (fairseq's RoBERTa does the same): 15% of the rows, so
// the (M, V) logits cost a seventh of scoring every position. With mlm_transform (Hugging Face's
// BERT, and every imported one) a dense + activation + LayerNorm transform (mlm_transform.h)
// comes before the decoder: logits = LN(f(m·W + b))·wteᵀ + b; without it, the tied decoder and
// its bias alone.
//
// Ids (bert_specials): the tokenizer's specials serve as BERT's — [PAD] = <pad>, [CLS] = <bos>,
// [SEP] = <eos>, [UNK] = <unk> (BERT's vocab.txt: 0, 101, 102, 100) — and [MASK] is one id past a
// potop tokenizer's vocabulary (vocab_size = tokenizer.size() + 1), or with mask_in_vocab the
// tokenizer's own [MASK] (BERT's 103). Parameter names are the GPT's (GPT-2's) plus lm_head.*, so
// a classifier starts from a BERT's body exactly as from a GPT's.
#pragma once
#include <memory>
#include <vector>

#include "models/bert/masking.h"
#include "nn/transformer_config.h"
#include "nn/layer.h"
#include "nn/layered_model.h"
#include "nn/model.h"
#include "nn/tasks.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// A BERT's shape is a GPT's: the same fields, flags and JSON (the kind, "bert", tells them apart).
using BertConfig = TransformerConfig;

// A BERT's special ids with its tokenizer. first_ordinary: the first id a masked position may be
// filled with or replaced by (potop's tokenizers: after their 4 specials; a foreign vocabulary's
// specials are scattered, so 0 and `special` tells them apart).
struct BertSpecials {
  int cls = -1, sep = -1, mask = -1, pad = -1, unk = -1, first_ordinary = 0;
  bool special(int id) const { return id == cls || id == sep || id == mask || id == pad || id == unk; }
};
// An Error when the config's [MASK] is the tokenizer's (mask_in_vocab) and it has none; a
// tokenizer without <bos> and <eos> gets potop's ids for [CLS] and [SEP] (1 and 2).
BertSpecials bert_specials(const BertConfig& config, const Tokenizer& tokenizer);
// BERT's masking (masking.h) of `fraction` of a row's tokens with these ids: random replacements
// drawn from first_ordinary to the end of the tokenizer's vocabulary (as Hugging Face's collator,
// the whole of a foreign one).
MaskingRule masking_rule(double fraction, const BertSpecials& s, const Tokenizer& tokenizer);

struct BertLayers;  // the architecture (bert.cpp)

class Bert final : public LayeredModel<Bert, BertLayers>, public MaskedLM, public TextEncoder, public SelfAttention {
 public:
  explicit Bert(const BertConfig& config);  // parameters zero: init_weights, or load them
  static MemoryPlan plan(const BertConfig& config, const BatchShape& shape);
  static Layout parameter_layout(const BertConfig& config);

  const BertConfig& config() const;

  // The model contract. A batch: tokens (B, T) with the masked ones replaced, lengths (B) or null
  // (rows of T real tokens), targets (B, T): the original token at a masked position, -1
  // elsewhere. The loss is the mean over the masked positions; a batch without targets runs the
  // encoder alone (hidden()).
  void reserve(const BatchShape& shape) override;
  float forward(const Batch& batch, const Pass& pass) override;
  void backward(float loss_scale) override;
  MemoryPlan memory_plan(const BatchShape& shape) const override { return plan(config(), shape); }

  // Of the last forward: the rows (b·T + t) of the masked positions in order, their logits
  // (M, V), and the encoder's output (B·T, C).
  const std::vector<int>& masked_rows() const { return masked_; }
  const float* logits() const;
  const float* hidden() const { return output_; }
  // Self-attention probabilities of layer l in the last forward: (B, H, T, T). Recomputed from
  // that forward's batch.lengths, which must still be alive (as its tokens must for backward).
  const float* attention(int layer) override;

  // What a BERT does (nn/tasks.h; bert_tasks.cpp), each on the row [CLS] text [SEP].
  std::vector<std::vector<FillCandidate>> fill_mask(const Tokenizer& tokenizer, std::string_view text,
                                                    int top_k) override;
  // The mean of the last layer over the row (sentence-transformers' mean pooling), unit length.
  int embedding_size() const override { return config().n_embd; }
  std::vector<float> embed(const Tokenizer& tokenizer, const std::string& text, const std::string& field,
                           int* tokens) override;
  int attention_layers() const override { return config().n_layer; }
  int attention_heads() const override { return config().n_head; }
  int context_length() const override { return config().block_size; }
  bool causal() const override { return false; }
  // A "[MASK]" in the text is the mask token, the first one the focus (else [CLS]).
  AttentionRow attention_row(const Tokenizer& tokenizer, const std::string& text, const std::string& field) const override;
  void attend(const std::vector<int>& ids) override;
  std::string axis_label(const Tokenizer& tokenizer, int id) const override;

 private:
  using Layers = BertLayers;
  friend LayeredModel;
  Bert(std::shared_ptr<const Layers> layers, const ParameterSet& shared);
  void bind_activations();

  Activations acts_, head_acts_;  // the body's B·T rows; the head's M rows
  LayerPass last_{}, head_pass_{};
  const int* tokens_ = nullptr;
  const float *input_ = nullptr, *output_ = nullptr, *picked_ = nullptr, *head_in_ = nullptr;
  std::vector<int> masked_, masked_targets_;
  bool has_forward_ = false;
  std::vector<float> attention_map_, attention_scratch_;
  int attended_length_ = 0;  // the row attend() read: attention() reads its length
};

}  // namespace potop
