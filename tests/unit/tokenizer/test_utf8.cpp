#include "tokenizer/utf8.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/rng.h"

namespace potop {
namespace {

// Decoding must fail with exactly this message prefix: "<source>: invalid UTF-8 at byte
// offset <offset> (line <line>): " followed by something containing `what`.
void expect_invalid(const std::string& bytes, size_t offset, size_t line, const std::string& what) {
  SCOPED_TRACE(::testing::PrintToString(bytes));
  EXPECT_FALSE(utf8_valid(bytes));
  try {
    utf8_decode(bytes, "in.txt");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    const std::string prefix =
        "in.txt: invalid UTF-8 at byte offset " + std::to_string(offset) + " (line " + std::to_string(line) + "): ";
    EXPECT_EQ(msg.substr(0, prefix.size()), prefix) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

void expect_round_trip(const std::string& bytes, size_t code_points) {
  const std::u32string cps = utf8_decode(bytes, "test");
  EXPECT_EQ(cps.size(), code_points) << bytes;
  EXPECT_EQ(utf8_encode(cps), bytes);
  EXPECT_TRUE(utf8_valid(bytes));
}

TEST(Utf8, RoundTripsPolish) {
  expect_round_trip("Zażółć gęślą jaźń", 17);
  EXPECT_EQ(utf8_decode("ż", "t"), U"\u017C");
}

TEST(Utf8, RoundTripsRussianAndChinese) {
  expect_round_trip("Съешь же ещё этих мягких французских булок", 42);
  expect_round_trip("我能吞下玻璃而不伤身体。", 12);
}

TEST(Utf8, RoundTripsEmojiAndZwjSequences) {
  expect_round_trip("😀", 1);
  EXPECT_EQ(utf8_decode("😀", "t"), U"\U0001F600");
  expect_round_trip("👨‍👩‍👧‍👦", 7);  // four people joined by three U+200D
  expect_round_trip("👍🏽🇵🇱", 4);    // skin tone modifier, regional indicators
  expect_round_trip("a😀b🎉c", 5);
}

TEST(Utf8, RoundTripsCombiningMarks) {
  // "é" as e + U+0301 and "ą" as a + U+0328 stay separate code points.
  expect_round_trip("e\u0301 a\u0328", 5);
  EXPECT_EQ(utf8_decode("e\u0301", "t"), std::u32string(U"e\u0301"));
}

TEST(Utf8, RoundTripsAcrossAsciiFastPathBoundaries) {
  for (size_t pre = 0; pre < 20; ++pre) {
    const std::string s = std::string(pre, 'x') + "ż" + std::string(pre, 'y') + "😀\n";
    expect_round_trip(s, 2 * pre + 3);
  }
  expect_round_trip("", 0);
  expect_round_trip(std::string("\0a", 2), 2);  // NUL is valid UTF-8
}

TEST(Utf8, EncodesBoundaryCodePoints) {
  EXPECT_EQ(utf8_encode(U'\u007F'), "\x7F");
  EXPECT_EQ(utf8_encode(U'\u0080'), "\xC2\x80");
  EXPECT_EQ(utf8_encode(U'\u07FF'), "\xDF\xBF");
  EXPECT_EQ(utf8_encode(U'\u0800'), "\xE0\xA0\x80");
  EXPECT_EQ(utf8_encode(U'\uD7FF'), "\xED\x9F\xBF");
  EXPECT_EQ(utf8_encode(U'\uE000'), "\xEE\x80\x80");
  EXPECT_EQ(utf8_encode(U'\uFFFF'), "\xEF\xBF\xBF");
  EXPECT_EQ(utf8_encode(U'\U00010000'), "\xF0\x90\x80\x80");
  EXPECT_EQ(utf8_encode(U'\U0010FFFF'), "\xF4\x8F\xBF\xBF");
}

TEST(Utf8, EveryScalarValueRoundTrips) {
  std::u32string all;
  for (char32_t c = 0; c <= 0x10FFFF; ++c)
    if (is_scalar_value(c)) all.push_back(c);
  EXPECT_EQ(all.size(), 0x110000u - 0x800u);
  EXPECT_EQ(utf8_decode(utf8_encode(all), "all"), all);
}

TEST(Utf8, AcceptsExactlyTheWellFormedTwoAndThreeByteSequences) {
  size_t valid2 = 0, valid3 = 0;
  for (int a = 0x80; a < 0x100; ++a)
    for (int b = 0; b < 0x100; ++b) {
      const std::string s{static_cast<char>(a), static_cast<char>(b)};
      const bool ok = a >= 0xC2 && a <= 0xDF && (b & 0xC0) == 0x80;
      ASSERT_EQ(utf8_valid(s), ok) << a << " " << b;
      valid2 += ok;
    }
  for (int a = 0xE0; a < 0xF0; ++a)
    for (int b = 0x80; b < 0xC0; ++b)
      for (int c = 0x80; c < 0xC0; ++c) {
        const std::string s{static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)};
        const char32_t cp = ((a & 0x0F) << 12) | ((b & 0x3F) << 6) | (c & 0x3F);
        const bool ok = cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF);
        ASSERT_EQ(utf8_valid(s), ok) << a << " " << b << " " << c;
        valid3 += ok;
      }
  EXPECT_EQ(valid2, 0x800u - 0x80u);
  EXPECT_EQ(valid3, 0x10000u - 0x800u - 0x800u);
}

TEST(Utf8, RandomBytesEitherRoundTripOrThrow) {
  Rng rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string s(rng.below(12), '\0');
    for (auto& c : s) c = static_cast<char>(rng.below(4) == 0 ? rng.below(128) : 0x80 + rng.below(128));
    if (utf8_valid(s))
      EXPECT_EQ(utf8_encode(utf8_decode(s, "r")), s);
    else
      EXPECT_THROW(utf8_decode(s, "r"), Error);
  }
}

TEST(Utf8, RejectsStrayContinuationByte) {
  expect_invalid("ab\x9A", 2, 1, "unexpected continuation byte 0x9A");
  expect_invalid("\x80", 0, 1, "unexpected continuation byte 0x80");
  expect_invalid("\xC5\xBC\xBF", 2, 1, "unexpected continuation byte 0xBF");  // "ż" + one too many
}

TEST(Utf8, RejectsInvalidLeadBytes) {
  expect_invalid("a\xC0\xAF", 1, 1, "invalid lead byte 0xC0");
  expect_invalid("a\xC1\xBF", 1, 1, "invalid lead byte 0xC1");
  expect_invalid("ab\xF5\x80\x80\x80", 2, 1, "invalid byte 0xF5");
  expect_invalid("\xF8\x88\x80\x80\x80", 0, 1, "invalid byte 0xF8");
  expect_invalid("abc\xFE", 3, 1, "invalid byte 0xFE");
  expect_invalid("abc\xFF", 3, 1, "invalid byte 0xFF");
}

TEST(Utf8, RejectsOverlongEncodings) {
  expect_invalid("x\xE0\x80\xAF", 1, 1, "overlong 3-byte encoding of U+002F");
  expect_invalid("xy\xE0\x9F\xBF", 2, 1, "overlong 3-byte encoding of U+07FF");
  expect_invalid("\xF0\x82\x82\xAC", 0, 1, "overlong 4-byte encoding of U+20AC");
  expect_invalid("\xF0\x8F\xBF\xBF", 0, 1, "overlong 4-byte encoding of U+FFFF");
}

TEST(Utf8, RejectsSurrogates) {
  expect_invalid("ok \xED\xA0\x80", 3, 1, "encoded surrogate U+D800");
  expect_invalid("\xED\xBF\xBF", 0, 1, "encoded surrogate U+DFFF");
  // A CESU-8 style pair for U+1F600: the high surrogate is reported first.
  expect_invalid("\xED\xA0\xBD\xED\xB8\x80", 0, 1, "encoded surrogate U+D83D");
}

TEST(Utf8, RejectsValuesAboveTheUnicodeRange) {
  expect_invalid("z\xF4\x90\x80\x80", 1, 1, "U+110000 is above U+10FFFF");
  expect_invalid("\xF7\xBF\xBF\xBF", 0, 1, "invalid byte 0xF7");
}

TEST(Utf8, RejectsTruncatedSequences) {
  expect_invalid("x\xE2\x82", 1, 1, "lead byte 0xE2 needs 2 continuation bytes but the input ends after 1");
  expect_invalid("\xC5", 0, 1, "needs 1 continuation byte but the input ends after 0");
  expect_invalid("\xF0\x9F\x98", 0, 1, "needs 3 continuation bytes but the input ends after 2");
  expect_invalid("\xE2\x82" "A", 0, 1, "byte 0x41 at offset 2 is not one");
  expect_invalid("ab\xF0\x9F\xC5\xBC", 2, 1, "byte 0xC5 at offset 4 is not one");
}

TEST(Utf8, ReportsOffsetAndLineDeepInText) {
  std::string s;
  for (int i = 0; i < 6; ++i) s += "Zażółć gęślą jaźń\n";  // 27 bytes a line
  s += "abc\x9A";
  expect_invalid(s, 6 * 27 + 3, 7, "unexpected continuation byte 0x9A");
  expect_invalid(std::string(12345, 'a') + "\xFF", 12345, 1, "0xFF");
  expect_invalid(std::string(7, 'a') + "\xFF", 7, 1, "0xFF");
  expect_invalid(std::string(8, 'a') + "\xFF", 8, 1, "0xFF");
}

TEST(Utf8, DescribesCharacters) {
  EXPECT_EQ(describe_char(U'ż'), "'ż' (U+017C)");
  EXPECT_EQ(describe_char(U'ж'), "'ж' (U+0436)");
  EXPECT_EQ(describe_char(U'a'), "'a' (U+0061)");
  EXPECT_EQ(describe_char(U' '), "' ' (U+0020)");
  EXPECT_EQ(describe_char(U'\U0001F600'), "'😀' (U+1F600)");
  EXPECT_EQ(describe_char(U'\u0007'), "U+0007");
  EXPECT_EQ(describe_char(U'\0'), "U+0000");
  EXPECT_EQ(describe_char(U'\u007F'), "U+007F");
  EXPECT_EQ(describe_char(U'\u0085'), "U+0085");
  EXPECT_EQ(describe_char(U'\n'), "newline (U+000A)");
  EXPECT_EQ(describe_char(U'\t'), "tab (U+0009)");
  EXPECT_EQ(describe_char(0xD800), "U+D800");
  EXPECT_EQ(describe_char(0x110000), "U+110000");
  EXPECT_EQ(code_point_name(0x10FFFF), "U+10FFFF");
}

}  // namespace
}  // namespace potop
