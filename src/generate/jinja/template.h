// Chat templates as Hugging Face models carry them (tokenizer_config.json's "chat_template", a
// chat_template.jinja file, GGUF's tokenizer.chat_template): Jinja, rendered exactly as npm's
// @huggingface/jinja renders it — the renderer transformers.js and the Hugging Face hub use,
// which tests/chat compares potop's with on real models' templates and on every construct below.
//
// What renders: text, {{ }}, {# #}, whitespace control, if/elif/else, for (loop.*, else,
// `for x in y if c`, break, continue), set (tuples, namespace attributes, blocks), macros, call
// and filter blocks; literals, member access, slices, calls with keyword arguments and unpacking,
// every operator and test the reference has, its filters (tojson, join, default, map, selectattr,
// sort, ...) and string and dict methods; raise_exception, range, namespace, strftime_now.
// The reference's quirks are kept on purpose: booleans print "true", tojson prints 1.0 as 1,
// lengths are in UTF-16 code units. What the reference renders but potop cannot (printing a
// function, tojson's sort_keys, which depends on the locale, a lone surrogate) is a TemplateError
// of kind kUnsupported, never a different text. So is a source over 1 MiB, and what would exhaust
// the stack, memory or time: nesting past 200 (parsing) or 500 (the tree, values), macros calling
// each other past 100 deep, more than 2,000,000 evaluation steps, texts over 16 MiB, more than
// 32 MiB built in all, more than 2 s (fuzz/fuzz_chat_template.cpp).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "generate/jinja/ast.h"
#include "generate/jinja/error.h"
#include "generate/jinja/render_budget.h"

namespace potop::jinja {

class Template {
 public:
  // Parses the template; throws TemplateError (kSyntax or kUnsupported).
  explicit Template(std::string_view source);
  // Renders with `context`'s fields as the variables (messages, add_generation_prompt,
  // bos_token, ...). Throws TemplateError: kRaised for the template's raise_exception(message),
  // kRuntime or kUnsupported for the rest (past kMaxBuilt, or rendering for more than 2 s),
  // kBusy when the bytes of `shared` (a budget it shares with other renderings, whose turn the
  // caller holds: render_budget.h) are taken, or it was stopped. `built`, when given,
  // is set to the bytes it built (value.h), whether it rendered or threw.
  std::string render(const nlohmann::ordered_json& context, RenderBudget* shared = nullptr, size_t* built = nullptr) const;

 private:
  std::vector<NodePtr> program_;
};

}  // namespace potop::jinja
