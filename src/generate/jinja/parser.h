// Tokens -> the template's statements, by @huggingface/jinja's grammar and precedence (lowest
// first): `a if b else c`; or; and; not; comparisons and in / not in; + - ~; * / // %; **; is
// (tests); | (filters); unary + -; calls, .member and [index or slice]; literals and ( ).
#pragma once
#include <vector>

#include "generate/jinja/ast.h"
#include "generate/jinja/lexer.h"

namespace potop::jinja {

// Throws TemplateError (kSyntax) where the reference's parser refuses the template.
std::vector<NodePtr> parse(const std::vector<Token>& tokens);

}  // namespace potop::jinja
