#include "generate/stop_strings.h"

#include <algorithm>

namespace potop {

StopStrings::StopStrings(std::vector<std::string> stops) : stops_(std::move(stops)) {
  stops_.erase(std::remove(stops_.begin(), stops_.end(), std::string()), stops_.end());
}

std::string StopStrings::push(std::string_view piece) {
  if (stopped_) return {};
  text_.append(piece);
  // A stop string starts in what was held back, never in what was shown: any end of the text
  // that could begin one is held back.
  size_t cut = std::string::npos;
  for (const std::string& s : stops_) cut = std::min(cut, text_.find(s, shown_));
  if (cut != std::string::npos) {
    stopped_ = true;
    text_.resize(cut);
    std::string out = cut > shown_ ? text_.substr(shown_) : std::string();
    shown_ = text_.size();
    return out;
  }
  // Hold back the longest end of the text that is the beginning of a stop string.
  size_t held = 0;
  for (const std::string& s : stops_)
    for (size_t n = std::min(s.size() - 1, text_.size() - shown_); n > held; --n)
      if (text_.compare(text_.size() - n, n, s, 0, n) == 0) {
        held = n;
        break;
      }
  const size_t until = text_.size() - held;
  std::string out = text_.substr(shown_, until - shown_);
  shown_ = until;
  return out;
}

std::string StopStrings::flush() {
  std::string out = text_.substr(shown_);
  shown_ = text_.size();
  return out;
}

}  // namespace potop
