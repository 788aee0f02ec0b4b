#include "generate/stop_strings.h"

#include <algorithm>

namespace potop {

namespace {

// How many bytes at the end of `text` begin a UTF-8 character whose other bytes have not come
// yet (0 to 3): a byte token (byte-level BPE, a byte tokenizer, SentencePiece's byte fallback)
// ends inside a character, and a piece of text shown must not, or a reader that wants whole
// characters (JSON, a browser) would show the parts as U+FFFD. Bytes that can begin no character
// are never held: they are shown as they are, as the whole text would show them.
size_t unfinished_character(std::string_view text) {
  for (size_t back = 1; back <= std::min<size_t>(3, text.size()); ++back) {
    const auto c = static_cast<unsigned char>(text[text.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: its lead byte is further back
    const size_t length = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

}  // namespace

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
  size_t until = text_.size() - held;
  until -= unfinished_character(std::string_view(text_).substr(shown_, until - shown_));
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
