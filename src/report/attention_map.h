// Attention weights a person can look at, as heat maps on self-contained HTML pages: the one home
// of attention pictures. A model's self-attention (per layer and head), a sequence-to-sequence
// model's cross-attention, and the bag-of-words LM's weights on the earlier words, each read
// through its task (nn/tasks.h).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "nn/tasks.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// A model's self-attention as the page draws it: run(ids) runs the model on one row of ids, then
// layer(l) gives that layer's probabilities (H, T, T); label(id) is how a token is shown.
struct SelfAttentionMaps {
  int n_layer = 0, n_head = 0, block_size = 0;
  bool causal = true;  // a decoder's (the upper triangle is empty) or an encoder's
  std::function<void(const std::vector<int>& ids)> run;
  std::function<const float*(int layer)> layer;
  std::function<std::string(int id)> label;
  int n_kv_head = 0;  // key/value heads (SelfAttention::kv_heads): fewer than n_head when query heads share them

  // The key/value head query head h reads (itself under multi-head attention).
  int kv_head_of(int h) const { return n_kv_head > 0 && n_kv_head < n_head ? h / (n_head / n_kv_head) : h; }
  bool grouped() const { return n_kv_head > 0 && n_kv_head < n_head; }
};
// The maps of a model that shows its self-attention (nn/tasks.h); model and tokenizer must
// outlive them.
SelfAttentionMaps self_attention_maps(SelfAttention& model, const Tokenizer& tokenizer);

// Runs the model on ids (1 <= size <= block_size) and returns a self-contained HTML page:
// rows are the attending tokens (queries), columns the tokens attended to (keys); darker is more
// weight; hovering a cell shows the pair and its weight. layer / head select one map (-1 = all).
std::string attention_html(const SelfAttentionMaps& maps, const std::vector<int>& ids, int layer = -1, int head = -1);

// How a token is shown on an axis: its text, with visible stand-ins for whitespace.
std::string token_label(const Tokenizer& tokenizer, int id);

// The alignment picture of a sequence-to-sequence model (nn/tasks.h: Seq2Seq): for a sentence
// pair, which source tokens each target token's cross-attention looks at, as heat maps (one per
// decoder layer: the mean over heads, then each head). source: ids ending in </s>; target: ids
// without <s> and </s>. Runs the model teacher-forced on <s> + target and draws rows = target
// tokens and </s>, columns = source tokens.
std::string cross_attention_html(Seq2Seq& model, const Tokenizer& tokenizer, const std::vector<int>& source,
                                 const std::vector<int>& target, int layer = -1);

// The bag-of-words LM's attention (model/bow.h) on ids, one heat map in the same style: row t is
// the previous word w_{i-1} = ids[t], whose next word the model predicts, and its cells are the
// weights (T × T, row-major, zero for k >= t) it put on the earlier words ids[k], k < t. kind
// names the scoring (dot, additive, mean, idf) in the caption.
std::string bow_attention_html(const Tokenizer& tokenizer, const std::vector<int>& ids, const float* weights,
                               const std::string& kind);

}  // namespace potop
