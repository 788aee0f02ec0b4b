// libFuzzer target: the config parsers. Any bytes as a --config file (training options) or as
// config.json's "model" object must be applied or refused with a potop::Error (naming the key),
// never crash or throw anything else; whatever is accepted must survive validate() the same way.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "models/gpt/gpt_config.h"
#include "models/gpt/gpt_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace potop;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try {
    GptOptions options;
    apply_options_json(options, j, "fuzz.json");
    validate(options);
    (void)to_json(options);
  } catch (const Error&) {
  }
  try {
    GPTConfig config;
    update_from_json(config, j.is_object() && j.contains("model") ? j["model"] : j, "fuzz.json: model");
    config.validate("fuzz.json");
    (void)to_json(config);
  } catch (const Error&) {
  }
  return 0;
}
