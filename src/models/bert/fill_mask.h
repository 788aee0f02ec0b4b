// `potop bert fill`: the masked LM's guesses for each [MASK] of a prompt, as Hugging Face's
// fill-mask pipeline gives them: the top k tokens with their probabilities, and the prompt with
// each one in place.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "models/bert/bert.h"
#include "tokenizer/tokenizer.h"

namespace potop {

inline constexpr std::string_view kMaskText = "[MASK]";

// A text as a BERT reads it: [CLS], the text with each "[MASK]" as the mask id (their positions in
// mask_positions), [SEP]. Before a mask, the spaces that end the text go with the mask (a
// SentencePiece word carries its leading space). A text longer than the model's block is an Error.
std::vector<int> bert_input_ids(const Tokenizer& tokenizer, const BertConfig& config, std::string_view prompt,
                                 std::vector<int>& mask_positions);

// Bert::fill_mask (the MaskedLM task, nn/tasks.h) gives, for each [MASK] of the prompt (one at
// least, or an Error), in order, the top_k fills by probability (special tokens and [MASK] itself
// excluded: the softmax is over the rest).

}  // namespace potop
