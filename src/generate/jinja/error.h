// What rendering a chat template can fail with. The kinds matter to their callers: a template
// potop cannot render (kUnsupported, and kSyntax where @huggingface/jinja would also refuse it)
// makes `potop serve` fall back to its plain template at start-up, while a template that raises
// (raise_exception: "Conversation roles must alternate user/assistant/...") or fails on one
// conversation (kRuntime) is that request's 400. kBusy: the memory renderings share (a
// RenderBudget) is taken by others at the moment; the same rendering may succeed later (503).
#pragma once
#include <string>

#include "core/error.h"

namespace potop::jinja {

class TemplateError : public Error {
 public:
  enum class Kind { kSyntax, kUnsupported, kRuntime, kRaised, kBusy };
  TemplateError(Kind what, const std::string& message) : Error(message), kind(what) {}
  Kind kind;
};

[[noreturn]] inline void syntax_error(const std::string& m) { throw TemplateError(TemplateError::Kind::kSyntax, m); }
[[noreturn]] inline void runtime_error(const std::string& m) { throw TemplateError(TemplateError::Kind::kRuntime, m); }
// The short name the interpreter and the builtins use for it.
[[noreturn]] inline void fail(const std::string& m) { runtime_error(m); }
[[noreturn]] inline void unsupported(const std::string& what) {
  throw TemplateError(TemplateError::Kind::kUnsupported, what + " is not supported");
}

}  // namespace potop::jinja
