// Stop strings for streamed text: generation ends as soon as the text contains one of them, and
// the text up to it (not the stop string itself) is all that is shown. While streaming, the end
// of the text that might be the start of a stop string is held back until it is known not to be.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace potop {

class StopStrings {
 public:
  explicit StopStrings(std::vector<std::string> stops);

  // Appends a piece of generated text (one token's bytes). Returns what may be shown now, which
  // never ends inside a UTF-8 character that later bytes may finish; stopped() tells whether a
  // stop string was completed (the returned text then ends just before it).
  std::string push(std::string_view piece);
  // What is still held back, once generation has ended without a stop.
  std::string flush();
  bool stopped() const { return stopped_; }
  // The text so far, without the stop string and what followed it.
  const std::string& text() const { return text_; }

 private:
  std::vector<std::string> stops_;
  std::string text_;
  size_t shown_ = 0;  // bytes of text_ returned so far
  bool stopped_ = false;
};

}  // namespace potop
