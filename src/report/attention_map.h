// Attention weights a person can look at: for a short text, which tokens each token attends to,
// as one heat map per layer and head on an HTML page.
#pragma once
#include <string>
#include <vector>

#include "model/gpt.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// Runs the model on ids (1 <= size <= block_size) and returns a self-contained HTML page:
// rows are the attending characters (queries), columns the characters attended to (keys);
// darker is more weight; hovering a cell shows the pair and its weight. layer / head select one
// map (-1 = all).
std::string attention_html(GPT& model, const Tokenizer& tokenizer, const std::vector<int>& ids, int layer = -1,
                           int head = -1);

}  // namespace potop
