// libFuzzer target: chat templates (generate/jinja/template.h). Any bytes as a model's Jinja chat
// template must be parsed and rendered, or refused with a TemplateError, with a short
// conversation: never crash, hang, leak or exhaust memory, whatever the template loops over,
// nests or builds (a namespace that holds itself, a string doubled in a loop).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "generate/jinja/template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nlohmann::ordered_json;
  static const ordered_json context = ordered_json::parse(R"({
    "messages": [{"role": "system", "content": "Bądź zwięzły."}, {"role": "user", "content": "Cześć 👋 \"x\"\n"},
                 {"role": "assistant", "content": "Dzień dobry"}, {"role": "user", "content": "1.5"}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>",
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"a": [1, 2.5, null, true]}}}]})");
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const potop::jinja::Template t(text);
    (void)t.render(context);
  } catch (const potop::jinja::TemplateError&) {
  }
  return 0;
}
