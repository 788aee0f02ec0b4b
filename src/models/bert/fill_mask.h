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

struct FillCandidate {
  int id = 0;
  std::string token;     // the token's text (decode_one)
  std::string piece;     // its name (Tokenizer::piece)
  double probability = 0;
  std::string sequence;  // the prompt with this token in the mask's place (the other masks kept)
};

// A text as a BERT reads it: [CLS], the text with each "[MASK]" as the mask id (their positions in
// mask_positions), [SEP]. Before a mask, the spaces that end the text go with the mask (a
// SentencePiece word carries its leading space). A text longer than the model's block is an Error.
std::vector<int> bert_input_ids(const Tokenizer& tokenizer, const BertConfig& config, std::string_view prompt,
                                 std::vector<int>& mask_positions);

// For each [MASK] of the prompt (one at least, or an Error), in order, the top_k fills by probability (special tokens and
// [MASK] itself excluded).
std::vector<std::vector<FillCandidate>> fill_mask(Bert& model, const Tokenizer& tokenizer, std::string_view prompt,
                                                  int top_k);

}  // namespace potop
