// libFuzzer target: UTF-8 decoding and the character tokenizer. For any bytes:
//  - utf8_valid agrees with utf8_decode (which throws potop::Error exactly when invalid);
//  - valid text builds a vocabulary, and encode then decode gives back exactly the bytes;
//  - the same bytes parsed as a vocab.json load or are refused with a potop::Error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace potop;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const bool valid = utf8_valid(bytes);
  std::u32string text;
  try {
    text = utf8_decode(bytes, "fuzz");
    if (!valid) std::abort();  // decode accepted what utf8_valid rejected
  } catch (const Error&) {
    if (valid) std::abort();  // decode rejected what utf8_valid accepted
  }
  if (valid && !text.empty()) {
    const CharTokenizer tokenizer = CharTokenizer::from_text(text);
    const std::vector<int> ids = tokenizer.encode(text, "fuzz");
    if (tokenizer.decode(ids) != bytes) std::abort();  // the round trip must be exact
    if (utf8_encode(text) != bytes) std::abort();
    for (char32_t c : text) (void)describe_char(c);
  }
  const nlohmann::json j = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) {
    try {
      const CharTokenizer tokenizer = CharTokenizer::from_vocab_json(j, "fuzz vocab.json");
      if (CharTokenizer::from_vocab_json(tokenizer.vocab_json(), "again").chars() != tokenizer.chars()) std::abort();
      // The object a checkpoint embeds must rebuild the same tokenizer.
      if (tokenizer_from_json(tokenizer.to_json(), "embedded")->hash() != tokenizer.hash()) std::abort();
    } catch (const Error&) {
    }
  }
  return 0;
}
