#include "tokenizer/char_tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "support/testing.h"
#include "tokenizer/utf8.h"

namespace potop {
namespace {

TEST(CharTokenizer, BuildsSortedDistinctVocabulary) {
  const auto tok = CharTokenizer::from_text(U"żaba ba\n😀a");
  ASSERT_EQ(tok.size(), 6);
  EXPECT_EQ(tok.chars(), (std::vector<char32_t>{U'\n', U' ', U'a', U'b', U'ż', U'\U0001F600'}));
  EXPECT_EQ(tok.id_of(U'\n'), 0);
  EXPECT_EQ(tok.id_of(U'a'), 2);
  EXPECT_EQ(tok.id_of(U'ż'), 4);
  EXPECT_EQ(tok.id_of(U'\U0001F600'), 5);
  EXPECT_EQ(tok.id_of(U'x'), -1);
  EXPECT_EQ(tok.id_of(U'ж'), -1);
  EXPECT_EQ(tok.char_of(4), U'ż');
  EXPECT_THROW(CharTokenizer::from_text(U""), Error);
}

TEST(CharTokenizer, EncodeDecodeRoundTrip) {
  const std::string text = "Zażółć gęślą jaźń. Съешь же ещё. 我能吞下玻璃。 👨‍👩‍👧‍👦 e\u0301\n\t\"\\";
  const auto tok = CharTokenizer::from_text(utf8_decode(text, "t"));
  const std::vector<int> ids = tok.encode(text);
  EXPECT_EQ(ids.size(), utf8_decode(text, "t").size());
  for (int id : ids) EXPECT_TRUE(id >= 0 && id < tok.size());
  EXPECT_EQ(tok.decode(ids), text);
  std::string streamed;
  for (int id : ids) streamed += tok.decode_one(id);
  EXPECT_EQ(streamed, text);
  EXPECT_EQ(tok.encode(utf8_decode(text, "t")), ids);
}

TEST(CharTokenizer, UnknownCharacterNamesItAndItsPosition) {
  const auto tok = CharTokenizer::from_text(U"abc");
  EXPECT_EQ(testing::error_message([&] { tok.encode(U"abж", "prompt"); }),
            "prompt contains 'ж' (U+0436) at character 2, which the model never saw in training");
  EXPECT_EQ(testing::error_message([&] { tok.encode("ab\x07", "prompt"); }),
            "prompt contains U+0007 at character 2, which the model never saw in training");
  EXPECT_EQ(testing::error_message([&] { tok.encode(U"\n"); }),
            "text contains newline (U+000A) at character 0, which the model never saw in training");
  // Invalid UTF-8 in the prompt is reported as such, naming the prompt.
  EXPECT_EQ(testing::error_message([&] { tok.encode("a\xFF", "prompt"); }).rfind("prompt: invalid UTF-8 at byte offset 1", 0),
            0u);
}

TEST(CharTokenizer, DecodeRejectsIdsOutsideTheVocabulary) {
  const auto tok = CharTokenizer::from_text(U"ab");
  EXPECT_EQ(tok.decode(std::vector<int>{1, 0}), "ba");
  EXPECT_THROW(tok.decode(std::vector<int>{0, 2}), Error);
  EXPECT_THROW(tok.decode_one(-1), Error);
  EXPECT_EQ(testing::error_message([&] { tok.decode_one(5); }), "token id 5 is outside the vocabulary (ids 0..1)");
}

TEST(CharTokenizer, SaveLoadRoundTripsSpecialCharacters) {
  const testing::TempDir dir("vocab_rt");
  std::u32string chars = U"\n\"\\/ \tażŻ😀\u200D\u0301\uFEFF\u2028\U0010FFFF\u007F";
  chars.push_back(U'\0');
  const CharTokenizer tok(std::vector<char32_t>(chars.begin(), chars.end()));  // id order as given, not sorted
  tok.save(dir / "vocab.json");
  const auto loaded = CharTokenizer::load(dir / "vocab.json");
  EXPECT_EQ(loaded.chars(), tok.chars());
  EXPECT_EQ(loaded.hash(), tok.hash());

  // The file is a plain JSON array of one-character strings in id order.
  std::ifstream in(dir / "vocab.json", std::ios::binary);
  const auto j = nlohmann::json::parse(in);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), chars.size());
  EXPECT_EQ(j[0], "\n");
  EXPECT_EQ(j[1], "\"");
  EXPECT_EQ(j[2], "\\");
  EXPECT_EQ(j[9], "😀");
  EXPECT_EQ(j[chars.size() - 1].get<std::string>(), std::string(1, '\0'));
}

TEST(CharTokenizer, HashIsStableAndOrderSensitive) {
  // FNV-1a-64 of "a" (published test vector).
  EXPECT_EQ(CharTokenizer(std::vector<char32_t>{U'a'}).hash(), 0xaf63dc4c8601ec8cull);
  const CharTokenizer ab(std::vector<char32_t>{U'a', U'b'}), ba(std::vector<char32_t>{U'b', U'a'});
  EXPECT_NE(ab.hash(), ba.hash());
  EXPECT_EQ(ab.hash(), CharTokenizer::from_text(U"abba").hash());
}

TEST(CharTokenizer, ConstructorRejectsDuplicatesAndNonCharacters) {
  EXPECT_EQ(testing::error_message([] { CharTokenizer(std::vector<char32_t>{U'a', U'ż', U'b', U'ż'}); }),
            "vocabulary: entry 3 repeats 'ż' (U+017C), already entry 1");
  EXPECT_EQ(testing::error_message([] { CharTokenizer(std::vector<char32_t>{U'a', 0xD800}); }),
            "vocabulary: entry 1 is U+D800, which is not a Unicode character");
  EXPECT_EQ(testing::error_message([] { CharTokenizer(std::vector<char32_t>{}); }), "vocabulary: the vocabulary is empty");
}

TEST(CharTokenizer, LoadRejectsMalformedFiles) {
  const testing::TempDir dir("vocab_bad");
  const auto p = dir / "vocab.json";
  const std::string name = p.string();
  auto load_error = [&](const std::string& content) {
    testing::write_file(p, content);
    return testing::error_message([&] { CharTokenizer::load(p); });
  };
  auto expect_starts = [&](const std::string& msg, const std::string& prefix) {
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
  };
  expect_starts(testing::error_message([&] { CharTokenizer::load(dir / "missing.json"); }),
                (dir / "missing.json").string() + ": vocabulary file not found");
  expect_starts(testing::error_message([&] { CharTokenizer::load(dir); }), dir.path().string() + ": is a directory");
  expect_starts(load_error("[\"a\", "), name + ": not valid JSON");
  expect_starts(load_error(""), name + ": not valid JSON");
  expect_starts(load_error("[\"a\xFF\"]"), name + ": not valid JSON");
  expect_starts(load_error("[\"a\", 1e99999]"), name + ": not valid JSON");  // a number out of range
  EXPECT_EQ(load_error("{\"a\": 1}"), name + ": expected a JSON array of one-character strings, found an object");
  EXPECT_EQ(load_error("\"abc\""), name + ": expected a JSON array of one-character strings, found a string");
  EXPECT_EQ(load_error("[]"), name + ": the vocabulary is empty");
  EXPECT_EQ(load_error("[\"a\", 7]"), name + ": entry 1 is a number, expected a string of exactly one character");
  EXPECT_EQ(load_error("[\"a\", \"b\", null]"),
            name + ": entry 2 is null, expected a string of exactly one character");
  EXPECT_EQ(load_error("[\"a\", \"ab\"]"), name + ": entry 1 is \"ab\" (2 characters), expected exactly one character");
  EXPECT_EQ(load_error("[\"\"]"), name + ": entry 0 is \"\" (0 characters), expected exactly one character");
  EXPECT_EQ(load_error("[\"e\u0301\"]"), name + ": entry 0 is \"e\u0301\" (2 characters), expected exactly one character");
  EXPECT_EQ(load_error("[\"a\", \"\\n\", \"a\"]"), name + ": entry 2 repeats 'a' (U+0061), already entry 0");
  expect_starts(load_error("[\"\\ud800\"]"), name + ": not valid JSON");  // lone surrogate escape
  // Valid: escapes and raw UTF-8 both work.
  testing::write_file(p, "[\"\\u017c\", \"\\n\", \"😀\", \"\\u0000\"]");
  EXPECT_EQ(CharTokenizer::load(p).chars(), (std::vector<char32_t>{U'ż', U'\n', U'\U0001F600', U'\0'}));
}

TEST(CharTokenizer, UnknownCharactersSkippedOrReplacedAndReported) {
  const auto tok = CharTokenizer::from_text(U"ab \n");
  const std::string text = "aЖb\nbЖы a";
  UnknownReport report;
  EXPECT_EQ(tok.encode(text, "t", Unknown::kSkip, &report), tok.encode(std::string("ab\nb a")));
  EXPECT_EQ(report.count, 3);
  ASSERT_EQ(report.items.size(), 2u);
  EXPECT_EQ(report.items[0].c, U'Ж');
  EXPECT_EQ(report.items[0].count, 2);
  EXPECT_EQ(report.items[0].first_line, 1);
  EXPECT_EQ(report.items[1].first_line, 2);
  EXPECT_EQ(report.describe(), "3 characters outside the vocabulary (2 distinct): 'Ж' (U+0416) ×2 from line 1, 'ы' (U+044B) on line 2");
  // Replaced by the space.
  EXPECT_EQ(tok.decode(tok.encode(text, "t", Unknown::kReplace, nullptr)), "a b\nb   a");
  // kError refuses, naming the first.
  EXPECT_NE(testing::error_message([&] { tok.encode(text, "t", Unknown::kError, nullptr); }).find("'Ж' (U+0416) at character 1"),
            std::string::npos);
  EXPECT_TRUE(tok.can_encode("ab"));
  EXPECT_FALSE(tok.can_encode("aЖ"));
}

TEST(CharTokenizer, JsonValueRoundTrip) {
  const auto tok = CharTokenizer::from_text(U"Zażółć\n");
  const auto back = CharTokenizer::from_vocab_json(tok.vocab_json(), "model.json: vocab");
  EXPECT_EQ(back.chars(), tok.chars());
  EXPECT_EQ(testing::error_message([] { CharTokenizer::from_vocab_json(nlohmann::json::array({"a", 1}), "model.json: vocab"); }),
            "model.json: vocab: entry 1 is a number, expected a string of exactly one character");
}

TEST(CharTokenizer, DefaultIsEmptyAndRejectsEverything) {
  const CharTokenizer tok;
  EXPECT_EQ(tok.size(), 0);
  EXPECT_TRUE(tok.empty());
  EXPECT_EQ(tok.id_of(U'a'), -1);
  EXPECT_THROW(tok.encode(U"a"), Error);
}

}  // namespace
}  // namespace potop
