// Attention weights a person can look at: for a short text, which tokens each token attends to,
// as one heat map per layer and head on an HTML page.
#pragma once
#include <string>
#include <vector>

#include "models/gpt/gpt.h"
#include "tokenizer/tokenizer.h"

namespace potop {

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
