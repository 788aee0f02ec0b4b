// Building a tokenizer of any kind from a training text: what `potop tokenizer train` does (and
// what `potop train` can call to build a model's tokenizer).
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "core/fields.h"
#include "tokenizer/tokenizer.h"

namespace potop {

enum class TokenizerKind { kChar, kByte, kWord, kBpe, kUnigram };
Choice tokenizer_kind_choice(TokenizerKind& value);  // "char", "byte", "word", "bpe", "unigram"

struct TokenizerTrainOptions {
  TokenizerKind kind = TokenizerKind::kChar;
  // The number of tokens, specials included. 0: the kind decides — char: the text's distinct
  // characters; byte: 260 (any other value is refused for both); word: every word seen
  // min_count times. bpe and unigram need one (more than 260).
  long vocab_size = 0;
  long min_count = 1;      // word: keep words seen at least this often
  bool lowercase = false;  // word: lowercase the text first
  bool verbose = false;    // bpe/unigram: SentencePiece's log on stderr
};

// Throws potop::Error, naming the flag, for options no text can make valid (a vocabulary size
// out of range for the kind, a --min-count below 1): what a command checks before reading text.
void check_tokenizer_train_options(const TokenizerTrainOptions& options);

// Trains a tokenizer on text (UTF-8, named `what` in messages; byte ignores it). Throws
// potop::Error, naming the flag as potop tokenizer train calls it, for invalid UTF-8, an empty
// text, or an option the kind cannot take.
std::unique_ptr<Tokenizer> train_tokenizer(std::string_view text, std::string_view what,
                                           const TokenizerTrainOptions& options);

}  // namespace potop
