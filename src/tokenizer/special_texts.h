// Encoding a text in which special tokens are written out, as a chat template writes them
// ("<|im_start|>user\n...<|im_end|>", "<s>[INST] ..."): each occurrence of a special token's text
// becomes that token's id, and the text between is encoded as text. Hugging Face's tokenizers
// and llama.cpp's server read a rendered chat prompt this way; plain encode() never does, so a
// user's text that holds "<|endoftext|>" stays text everywhere else.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace potop {

// The texts of the tokenizer's special tokens (special_ids(): <bos>, <eos>, <pad>, <unk>, a Hugging
// Face vocabulary's added specials) and their ids, longest first.
std::vector<std::pair<std::string, int>> special_texts(const Tokenizer& tokenizer);

// The text a special token is written as: what it decodes to (a Hugging Face vocabulary's
// "<|im_start|>"), or its piece for potop's own specials and SentencePiece's, which decode to
// nothing, and for <unk>, whose stand-in (U+FFFD, " ⁇ ") is ordinary text.
std::string special_text(const Tokenizer& tokenizer, int id);

// encode(), with every occurrence of a special token's text (the longest where two start at the
// same place) read as the token.
std::vector<int> encode_with_specials(const Tokenizer& tokenizer, std::string_view text, std::string_view what,
                                      Unknown unknown, UnknownReport* report);

}  // namespace potop
