// Deterministic multilingual text for tokenizer tests: lines of made-up words from Polish,
// Russian, Chinese and English syllables, with digits, punctuation and emoji — a Zipf-like mix
// of frequent and rare words that a subword tokenizer can learn from, generated rather than
// committed. (scripts/multilingual-text.py makes the same kind of text for the CLI tests and
// the benchmark.)
#pragma once
#include <string>
#include <vector>

#include "core/rng.h"

namespace potop::testing {

inline std::string multilingual_text(size_t bytes, uint64_t seed = 1) {
  static const std::vector<std::vector<std::string>> syllables = {
      {"prze", "szcz", "rz", "ąb", "ęś", "ła", "ży", "ść", "ko", "mi", "cic", "wa", "nie", "dź", "ój", "ta"},
      {"при", "вет", "мир", "щи", "жё", "лый", "ст", "ра", "ны", "ть", "ся", "ков", "ёж", "эх", "юг", "ша"},
      {"我", "能", "吞", "下", "玻", "璃", "而", "不", "伤", "身", "体", "中", "文", "字", "的", "是"},
      {"the", "qu", "ick", "br", "own", "fox", "ju", "mps", "ov", "er", "la", "zy", "dog", "ing", "ed", "s"}};
  static const std::vector<std::string> punct = {",", ".", "!", "?", ";", ":", " —", "…"};
  static const std::vector<std::string> emoji = {"😀", "🎉", "👍🏽", "❤️", "🇵🇱"};
  Rng rng(seed);
  auto below = [&](size_t n) { return static_cast<size_t>(rng.below(n)); };
  // 300 words a language; word i is drawn about as often as 1/(i+1) (squared uniform: skewed).
  std::vector<std::vector<std::string>> lexicon(syllables.size());
  for (size_t lang = 0; lang < syllables.size(); ++lang)
    for (int w = 0; w < 300; ++w) {
      std::string word;
      for (size_t k = 0, n = 1 + below(4); k < n; ++k) word += syllables[lang][below(16)];
      lexicon[lang].push_back(word);
    }
  std::string out;
  while (out.size() < bytes) {
    const size_t lang = below(lexicon.size());
    const size_t words = 3 + below(10);
    for (size_t k = 0; k < words; ++k) {
      if (k > 0 && lang != 2) out += ' ';
      const double u = rng.uniform();
      out += lexicon[lang][static_cast<size_t>(u * u * u * 300) % 300];
    }
    // (Appended piece by piece: g++ 12 warns falsely about "literal" + std::string, -Wrestrict.)
    if (below(5) == 0) out.append(" ").append(std::to_string(below(100000)));
    if (below(10) == 0) out.append(" ").append(emoji[below(emoji.size())]);
    out.append(punct[below(punct.size())]).append("\n");
  }
  return out;
}

// Text none of whose words the generator makes, in the same scripts and beyond: characters a
// tokenizer trained on multilingual_text() never saw, for byte fallback.
inline const std::vector<std::string>& unseen_texts() {
  static const std::vector<std::string> texts = {
      "Zażółć gęślą jaźń — Źdźbło!",
      "Съешь же ещё этих мягких французских булок, да выпей чаю.",
      "我能吞下玻璃而不伤身体。鬱龘齉",
      "👩‍🚀🧑🏿‍🔬 🏳️‍🌈 e\u0301 ǅ ﬁ ½ \u00a0nbsp",
      "  leading, trailing and  double spaces  ",
      "tab\there, 12345 67.89, ĄĘŁŃÓŚŹŻ ЁЖЩ",
      "Ελληνικά, עברית, العربية, हिन्दी, 日本語のテキスト, 한국어"};
  return texts;
}

}  // namespace potop::testing
