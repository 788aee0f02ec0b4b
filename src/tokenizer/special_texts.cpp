#include "tokenizer/special_texts.h"

#include <algorithm>

namespace potop {

std::string special_text(const Tokenizer& tokenizer, int id) {
  const std::string text = id == tokenizer.specials().unk ? "" : tokenizer.decode_one(id);
  return text.empty() ? tokenizer.piece(id) : text;
}

std::vector<std::pair<std::string, int>> special_texts(const Tokenizer& tokenizer) {
  std::vector<std::pair<std::string, int>> texts;
  for (const int id : tokenizer.special_ids()) texts.emplace_back(special_text(tokenizer, id), id);
  // Longest first, so that of two texts starting at the same place the longer wins.
  std::stable_sort(texts.begin(), texts.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  return texts;
}

std::vector<int> encode_with_specials(const Tokenizer& tokenizer, std::string_view text, std::string_view what,
                                      Unknown unknown, UnknownReport* report) {
  const std::vector<std::pair<std::string, int>> specials = special_texts(tokenizer);
  std::vector<int> ids;
  size_t start = 0;  // where the text not yet encoded begins
  auto flush = [&](size_t end) {
    if (end <= start) return;
    const std::vector<int> part = tokenizer.encode(text.substr(start, end - start), what, unknown, report);
    ids.insert(ids.end(), part.begin(), part.end());
  };
  for (size_t i = 0; i < text.size();) {
    const auto hit = std::find_if(specials.begin(), specials.end(),
                                  [&](const auto& s) { return !s.first.empty() && text.substr(i).starts_with(s.first); });
    if (hit == specials.end()) {
      ++i;
      continue;
    }
    flush(i);
    ids.push_back(hit->second);
    i += hit->first.size();
    start = i;
  }
  flush(text.size());
  return ids;
}

}  // namespace potop
