// The alignment picture of a translation model: for a sentence pair, which source tokens each
// target token's cross-attention looks at, as heat maps (one per decoder layer: the mean over
// heads, then each head) on a self-contained HTML page, in the style of attention_map.h.
#pragma once
#include <string>
#include <vector>

#include "models/encoder_decoder/encoder_decoder.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// source: ids ending in </s>; target: ids without <s> and </s>. Runs the model teacher-forced on
// <s> + target + ... and draws rows = target tokens and </s>, columns = source tokens.
std::string cross_attention_html(EncoderDecoder& model, const Tokenizer& tokenizer, const std::vector<int>& source,
                                 const std::vector<int>& target, int layer = -1);

}  // namespace potop
