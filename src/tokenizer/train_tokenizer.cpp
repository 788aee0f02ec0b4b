#include "tokenizer/train_tokenizer.h"

#include "core/error.h"
#include "tokenizer/byte_tokenizer.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/utf8.h"
#include "tokenizer/word_tokenizer.h"

namespace potop {

Choice tokenizer_kind_choice(TokenizerKind& value) {
  return choice(value, {{TokenizerKind::kChar, "char"},
                        {TokenizerKind::kByte, "byte"},
                        {TokenizerKind::kWord, "word"},
                        {TokenizerKind::kBpe, "bpe"},
                        {TokenizerKind::kUnigram, "unigram"}});
}

void check_tokenizer_train_options(const TokenizerTrainOptions& options) {
  const long n = options.vocab_size;
  const std::string flag = "--vocab-size " + std::to_string(n);
  if (n < 0) throw Error("--vocab-size must be positive (got " + std::to_string(n) + ")");
  if (n > kMaxVocabSize)
    throw Error(flag + ": more than the " + std::to_string(kMaxVocabSize) + " token ids (int32) can number");
  if (options.min_count < 1) throw Error("--min-count must be at least 1 (got " + std::to_string(options.min_count) + ")");
  switch (options.kind) {
    case TokenizerKind::kByte:
      if (n != 0 && n != ByteTokenizer::kSize)
        throw Error(flag + ": a byte tokenizer always has " + std::to_string(ByteTokenizer::kSize) +
                    " tokens (4 specials and 256 bytes); leave --vocab-size out");
      break;
    case TokenizerKind::kWord:
      if (n != 0 && n <= kSpecialCount)
        throw Error(flag + ": a word vocabulary needs more than its " + std::to_string(kSpecialCount) +
                    " special tokens");
      break;
    case TokenizerKind::kBpe:
    case TokenizerKind::kUnigram: {
      if (n == 0) throw Error("--vocab-size is needed for --kind bpe and unigram (8000 is usual)");
      constexpr long kMin = kSpecialCount + 256 + 1;
      if (n < kMin)
        throw Error(flag + ": a " + std::string(options.kind == TokenizerKind::kBpe ? "bpe" : "unigram") +
                    " vocabulary holds the 4 special tokens, the 256 byte pieces and a piece per distinct character of "
                    "the text, so it needs at least " +
                    std::to_string(kMin) + " (8000 is usual)");
      break;
    }
    case TokenizerKind::kChar: break;  // checked against the text's characters
  }
}

std::unique_ptr<Tokenizer> train_tokenizer(std::string_view text, std::string_view what,
                                           const TokenizerTrainOptions& options) {
  const std::string src(what);
  const long n = options.vocab_size;
  check_tokenizer_train_options(options);
  if (options.kind == TokenizerKind::kByte) return std::make_unique<ByteTokenizer>();
  if (text.empty()) throw Error(src + ": is empty; a tokenizer needs text to learn from");
  switch (options.kind) {
    case TokenizerKind::kChar: {
      auto t = std::make_unique<CharTokenizer>(CharTokenizer::from_text(utf8_decode(text, what)));
      if (n != 0 && n != t->size())
        throw Error("--vocab-size " + std::to_string(n) + ": a char tokenizer has one token per distinct character of " +
                    src + ", here " + std::to_string(t->size()) + "; leave --vocab-size out");
      return t;
    }
    case TokenizerKind::kWord:
      return std::make_unique<WordTokenizer>(
          WordTokenizer::train(text, what, WordTrainOptions{options.lowercase, options.min_count, n}));
    case TokenizerKind::kBpe:
    case TokenizerKind::kUnigram: {
      SentencePieceTrainOptions spm;
      spm.kind = options.kind == TokenizerKind::kBpe ? "bpe" : "unigram";
      spm.vocab_size = n;
      spm.verbose = options.verbose;
      return SentencePieceTokenizer::train(text, what, spm);
    }
    case TokenizerKind::kByte: break;
  }
  throw Error("unknown tokenizer kind");
}

}  // namespace potop
