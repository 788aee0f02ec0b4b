// The word tokenizer round-trips text made of known words exactly; what it loses is tested here
// too: unknown words (<unk>), case (with lowercase), and rare whitespace runs (one token each,
// so a run of spaces the training text lacked is an unknown "word").
#include "tokenizer/word_tokenizer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/multilingual.h"
#include "support/round_trip.h"
#include "support/testing.h"
#include "tokenizer/utf8.h"

namespace potop {
namespace {

TEST(WordTokenizer, SplitsOnWordBoundaries) {
  const std::string text = "Pan Kmicic, pan Zagłoba! Ёжик 3.14 can't\n我能吞下玻璃 😀\n";
  const WordTokenizer tok = WordTokenizer::train(text, "t", {});
  std::vector<std::string> words;
  for (const int id : tok.encode(text)) words.push_back(tok.decode_one(id));
  // ICU: "can't" and "3.14" stay whole; spaces, commas and newlines are tokens of their own;
  // Chinese is split by ICU's dictionary.
  EXPECT_NE(std::find(words.begin(), words.end(), "can't"), words.end());
  EXPECT_NE(std::find(words.begin(), words.end(), "3.14"), words.end());
  EXPECT_NE(std::find(words.begin(), words.end(), "Zagłoba"), words.end());
  EXPECT_NE(std::find(words.begin(), words.end(), ","), words.end());
  EXPECT_NE(std::find(words.begin(), words.end(), "\n"), words.end());
  EXPECT_NE(std::find(words.begin(), words.end(), "😀"), words.end());
  EXPECT_EQ(std::find(words.begin(), words.end(), "我能吞下玻璃"), words.end());
  EXPECT_EQ(tok.decode(tok.encode(text)), text);
  // The specials are ids 0..3, not words: the text "<unk>" is the words "<", "unk", ">".
  EXPECT_EQ(tok.piece(kPadId), "<pad>");
  EXPECT_EQ(tok.piece(kUnkId), "<unk>");
  EXPECT_EQ(tok.id_of("<unk>"), -1);
  EXPECT_EQ(tok.id_of(" "), kSpecialCount);  // the most frequent word: the space
}

TEST(WordTokenizer, RoundTripsKnownWords) {
  const std::string text = testing::multilingual_text(30000);
  const WordTokenizer tok = WordTokenizer::train(text, "t", {});
  testing::expect_exact_round_trip(tok, text);
}

TEST(WordTokenizer, LosesUnknownWords) {
  const WordTokenizer tok = WordTokenizer::train("ala ma kota\nkot ma alę\n", "t", {});
  const std::string text = "ala ma psa";
  EXPECT_FALSE(tok.can_encode(text));
  const std::string message = testing::error_message([&] { tok.encode(text, "prompt"); });
  EXPECT_NE(message.find("\"psa\""), std::string::npos) << message;
  EXPECT_NE(message.find("prompt: line 1"), std::string::npos) << message;
  UnknownReport report;
  const std::vector<int> ids = tok.encode(text, "t", Unknown::kReplace, &report);
  EXPECT_EQ(ids.back(), kUnkId);
  EXPECT_EQ(tok.decode(ids), "ala ma <unk>");  // the word is lost
  EXPECT_EQ(report.count, 1);
  EXPECT_NE(report.describe().find("1 word outside the vocabulary"), std::string::npos) << report.describe();
  EXPECT_EQ(tok.decode(tok.encode(text, "t", Unknown::kSkip, nullptr)), "ala ma ");
}

TEST(WordTokenizer, LosesRareWhitespaceRuns) {
  // Whitespace is not normalized: a run of spaces is one word, so a run the training text never
  // had is unknown, like a rare word.
  const WordTokenizer tok = WordTokenizer::train("a b c\n", "t", {});
  EXPECT_EQ(tok.decode(tok.encode("a b")), "a b");
  EXPECT_EQ(tok.decode(tok.encode("a   b", "t", Unknown::kReplace, nullptr)), "a<unk>b");
  EXPECT_EQ(tok.decode(tok.encode("a\tb", "t", Unknown::kReplace, nullptr)), "a<unk>b");
}

TEST(WordTokenizer, LowercaseLosesCase) {
  const WordTokenizer tok = WordTokenizer::train("Ala ŻUBR Ёж ala\n", "t", {.lowercase = true});
  EXPECT_TRUE(tok.lowercase());
  EXPECT_EQ(tok.id_of("Ala"), -1);
  EXPECT_GE(tok.id_of("ala"), kSpecialCount);
  EXPECT_EQ(tok.decode(tok.encode("ALA żubr ЁЖ")), "ala żubr ёж");
}

TEST(WordTokenizer, MinCountAndVocabSize) {
  const std::string text = "a a a b b c\n";
  const WordTokenizer all = WordTokenizer::train(text, "t", {});
  EXPECT_EQ(all.size(), kSpecialCount + 5);  // " ", a, b, c, "\n"
  const WordTokenizer common = WordTokenizer::train(text, "t", {.min_count = 2});
  EXPECT_EQ(common.id_of("c"), -1);
  EXPECT_GE(common.id_of("b"), 0);
  const WordTokenizer small = WordTokenizer::train(text, "t", {.vocab_size = kSpecialCount + 2});
  EXPECT_EQ(small.size(), kSpecialCount + 2);
  EXPECT_EQ(small.decode_one(kSpecialCount), " ");  // 5 spaces
  EXPECT_EQ(small.decode_one(kSpecialCount + 1), "a");
  EXPECT_NE(testing::error_message([&] { WordTokenizer::train(text, "t", {.min_count = 0}); }).find("--min-count"),
            std::string::npos);
  EXPECT_NE(testing::error_message([&] { WordTokenizer::train(text, "t", {.min_count = 9}); }).find("--min-count 9"),
            std::string::npos);
  EXPECT_NE(testing::error_message([&] { WordTokenizer::train(text, "t", {.vocab_size = 4}); }).find("--vocab-size 4"),
            std::string::npos);
  EXPECT_NE(testing::error_message([&] { WordTokenizer::train("a\xFF", "data.txt", {}); }).find("data.txt"),
            std::string::npos);
}

TEST(WordTokenizer, SavesAndLoads) {
  const WordTokenizer tok = WordTokenizer::train("Żółw i jeż\nżółw\n", "t", {.lowercase = true});
  const testing::TempDir dir("word_tokenizer");
  save_tokenizer_dir(tok, dir);
  EXPECT_TRUE(std::filesystem::exists(dir / "words.json"));
  const auto back = load_tokenizer_dir(dir);
  EXPECT_EQ(back->kind(), "word");
  EXPECT_EQ(back->hash(), tok.hash());
  EXPECT_EQ(back->encode("żółw i jeż"), tok.encode("żółw i jeż"));
  const auto from_json = tokenizer_from_json(tok.to_json(), "checkpoint");
  EXPECT_EQ(from_json->hash(), tok.hash());
  // A corrupt words.json: named, with what is wrong.
  testing::write_file(dir / "words.json", R"({"lowercase": false, "words": ["<pad>", "<bos>", "x"]})");
  const std::string message = testing::error_message([&] { load_tokenizer_dir(dir); });
  EXPECT_NE(message.find("words.json"), std::string::npos) << message;
  testing::write_file(dir / "words.json", R"({"lowercase": false, "words": ["<pad>", "<bos>", "<eos>", "<unk>", "a", "a"]})");
  EXPECT_NE(testing::error_message([&] { load_tokenizer_dir(dir); }).find("repeats"), std::string::npos);
}

}  // namespace
}  // namespace potop
