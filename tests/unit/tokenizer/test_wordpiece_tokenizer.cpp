// The wordpiece tokenizer on a small vocabulary made here (tests/cli/tokenizers_bert.sh compares it
// with Hugging Face's tokenizers on bert-base-uncased's real files).
#include "tokenizer/wordpiece_tokenizer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/testing.h"

namespace potop {
namespace {

// ids: [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4, then words and pieces.
WordPieceTokenizer make(WordPieceOptions options = {}) {
  std::vector<std::string> tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "##s",  "sat",
                                     ".",     "un",    "##aff", "##able", "'",     "t",   "don", "中",   "σας", "istanbul",
                                     "The",   ",",     "a"};
  return WordPieceTokenizer(tokens, {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}, options, "test");
}

std::vector<std::string> pieces(const WordPieceTokenizer& t, const std::string& text) {
  std::vector<std::string> out;
  for (const int id : t.encode(text, "text", Unknown::kReplace, nullptr)) out.push_back(t.piece(id));
  return out;
}

TEST(WordPiece, NormalizesAsBertDoes) {
  const WordPieceTokenizer t = make();
  EXPECT_EQ(t.normalize("ΣΑΣ ΟΔΟΣ"), "σας οδος");  // final sigma, as Python's lower() and JavaScript's
  EXPECT_EQ(t.normalize("İstanbul"), "istanbul");  // i + U+0307, the dot stripped
  EXPECT_EQ(t.normalize("Zażółć Ünïcödé"), "zazołc unicode");  // ł has no decomposition
  EXPECT_EQ(t.normalize(std::string("a\u200Bb") + '\0' + "c\uFFFDd\u0085e"), "abcde");  // format, NUL, U+FFFD, controls
  EXPECT_EQ(t.normalize("a\tb\u00A0c\u3000d\ne"), "a b c d e");  // whitespace becomes a space
  EXPECT_EQ(t.normalize("x中y\U00020000z"), "x 中 y \U00020000 z");  // CJK, in and beyond the BMP
  EXPECT_EQ(t.normalize("a\U000E0080b"), "ab");  // unassigned: a control character, as in BERT
  WordPieceOptions cased;
  cased.lowercase = false;
  EXPECT_EQ(make(cased).normalize("Zażółć"), "Zażółć");  // strip_accents unset follows lowercase
  cased.strip_accents = true;
  EXPECT_EQ(make(cased).normalize("Zażółć"), "Zazołc");
}

TEST(WordPiece, SplitsWordsAndPunctuationAndPiecesGreedily) {
  const WordPieceTokenizer t = make();
  EXPECT_EQ(pieces(t, "The cats sat."), (std::vector<std::string>{"the", "cat", "##s", "sat", "."}));
  EXPECT_EQ(pieces(t, "unaffable don't"), (std::vector<std::string>{"un", "##aff", "##able", "don", "'", "t"}));
  EXPECT_EQ(pieces(t, "cats dogs"), (std::vector<std::string>{"cat", "##s", "[UNK]"}));  // the whole word
  EXPECT_EQ(pieces(t, "x中y"), (std::vector<std::string>{"[UNK]", "中", "[UNK]"}));
  EXPECT_EQ(pieces(t, std::string(100, 'a')), std::vector<std::string>{"[UNK]"});  // no "##a"
  EXPECT_EQ(pieces(t, "$"), std::vector<std::string>{"[UNK]"});  // ASCII symbols are punctuation
  EXPECT_EQ(t.encode("[CLS] the [MASK].[SEP]", "text", Unknown::kError, nullptr), (std::vector<int>{2, 5, 4, 9, 3}));
  EXPECT_EQ(pieces(t, "[cls]"), (std::vector<std::string>{"[UNK]", "[UNK]", "[UNK]"}));  // only as written
  EXPECT_EQ(t.encode("", "text"), std::vector<int>{});
}

TEST(WordPiece, UnknownWordsFollowThePolicy) {
  const WordPieceTokenizer t = make();
  try {
    t.encode("the cat\nsat dogs", "input.txt");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input.txt: line 2: the word \"dogs\" is outside the vocabulary"),
              std::string::npos)
        << e.what();
  }
  UnknownReport report;
  EXPECT_EQ(t.encode("dogs sat dogs", "text", Unknown::kSkip, &report), std::vector<int>{8});
  EXPECT_EQ(report.count, 2);
  EXPECT_FALSE(t.can_encode("dogs"));
  EXPECT_TRUE(t.can_encode("the cats"));
  EXPECT_THROW(t.encode("\xff", "text"), Error);
}

TEST(WordPiece, DecodesAsHuggingFacesDecoder) {
  const WordPieceTokenizer t = make();
  const std::vector<int> ids = {2, 5, 6, 7, 8, 9, 3, 0};
  EXPECT_EQ(t.decode(ids), "the cats sat.");
  EXPECT_EQ(t.decode(std::vector<int>{15, 13, 14, 20, 4}), "don't, [MASK]");
  std::string streamed;
  for (const int id : ids) streamed += t.decode_one(id);
  EXPECT_EQ(streamed, " the cats sat .");
  EXPECT_EQ(t.char_count(7), 1);  // "##s"
  EXPECT_EQ(t.char_count(2), 0);
  EXPECT_EQ(t.piece(11), "##aff");
  EXPECT_EQ(t.specials(), (SpecialTokens{0, 2, 3, 1, 4}));  // [MASK] 4
  EXPECT_THROW(t.decode(std::vector<int>{22}), Error);
}

TEST(WordPiece, RoundTripsThroughJsonAndFiles) {
  WordPieceOptions o;
  o.lowercase = false, o.strip_accents = true, o.max_input_chars_per_word = 7;
  const WordPieceTokenizer t = make(o);
  const auto back = WordPieceTokenizer::from_json(t.to_json(), "json");
  EXPECT_EQ(back->hash(), t.hash());
  EXPECT_EQ(back->options(), o);
  EXPECT_NE(make().hash(), t.hash());
  const testing::TempDir dir("wordpiece_files");
  t.save_files(dir.path());
  const auto loaded = load_tokenizer(dir.path(), "wordpiece");
  EXPECT_EQ(loaded->hash(), t.hash());
  EXPECT_EQ(loaded->encode("The cats", "text", Unknown::kReplace, nullptr), (std::vector<int>{19, 6, 7}));
  EXPECT_THROW(WordPieceTokenizer({"a", "a", "[UNK]"}, {}, {}, "dup"), Error);
  EXPECT_THROW(WordPieceTokenizer({"a"}, {}, {}, "no unk"), Error);
}

}  // namespace
}  // namespace potop
