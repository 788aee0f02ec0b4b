// A chat template's text -> tokens, as @huggingface/jinja's lexer makes them: the template is
// first preprocessed as its Template does (one trailing newline dropped, lstrip_blocks and
// trim_blocks on, the transformers-only {% generation %} tags removed), then cut into text and
// the tokens inside {% %}, {{ }} and {# #}, with the whitespace control of {%- -%} applied.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace potop::jinja {

enum class TokenType {
  kText, kNumber, kString, kIdentifier, kEquals, kOpenParen, kCloseParen, kOpenStatement, kCloseStatement,
  kOpenExpression, kCloseExpression, kOpenSquare, kCloseSquare, kOpenCurly, kCloseCurly, kComma, kDot, kColon,
  kPipe, kAdditive, kMultiplicative, kPower, kComparison, kUnary, kComment
};

struct Token {
  std::string value;
  TokenType type;
};

std::string preprocess(std::string_view source);
// Throws TemplateError (kSyntax) for what the reference's lexer refuses.
std::vector<Token> tokenize(std::string_view source);

}  // namespace potop::jinja
