// Attention weights a person can look at: for a short text, which tokens each token attends to,
// as one heat map per layer and head on an HTML page.
#pragma once
#include <functional>
#include <string>
#include <vector>
#include <string>
#include <vector>

#include "models/gpt/gpt.h"
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
};
// The page for any model with self-attention (a GPT, BERT, a classifier); layer / head as below.
std::string attention_html(const SelfAttentionMaps& maps, const std::vector<int>& ids, int layer = -1, int head = -1);

// How a token is shown on an axis: its text, with visible stand-ins for whitespace.
std::string token_label(const Tokenizer& tokenizer, int id);

// Runs the model on ids (1 <= size <= block_size) and returns a self-contained HTML page:
// rows are the attending characters (queries), columns the characters attended to (keys);
// darker is more weight; hovering a cell shows the pair and its weight. layer / head select one
// map (-1 = all).
std::string attention_html(GPT& model, const Tokenizer& tokenizer, const std::vector<int>& ids, int layer = -1,
                           int head = -1);

// The bag-of-words LM's attention (model/bow.h) on ids, one heat map in the same style: row t is
// the previous word w_{i-1} = ids[t], whose next word the model predicts, and its cells are the
// weights (T × T, row-major, zero for k >= t) it put on the earlier words ids[k], k < t. kind
// names the scoring (dot, additive, mean, idf) in the caption.
std::string bow_attention_html(const Tokenizer& tokenizer, const std::vector<int>& ids, const float* weights,
                               const std::string& kind);

}  // namespace potop
