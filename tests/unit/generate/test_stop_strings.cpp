// Stop strings on streamed text: nothing of a stop string is ever shown, and nothing else is
// held back longer than it could still be the start of one, or of a character.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "generate/stop_strings.h"

namespace potop {
namespace {

// Streams the pieces; returns what was shown, joined, and whether a stop string ended it.
std::pair<std::string, bool> stream(const std::vector<std::string>& stops, const std::vector<std::string>& pieces) {
  StopStrings s(stops);
  std::string shown;
  for (const std::string& p : pieces) {
    shown += s.push(p);
    if (s.stopped()) return {shown, true};
  }
  return {shown + s.flush(), false};
}

TEST(StopStrings, EndsBeforeTheStopStringEvenAcrossPieces) {
  EXPECT_EQ(stream({"ie"}, {"P", "a", "n", " ", "p", "i", "e", "s"}), std::pair(std::string("Pan p"), true));
  EXPECT_EQ(stream({"\n\n"}, {"ab\n", "\ncd"}), std::pair(std::string("ab"), true));
  EXPECT_EQ(stream({"xyz", "b"}, {"a", "b", "c"}), std::pair(std::string("a"), true));  // the earliest one wins
  EXPECT_EQ(stream({"żółw"}, {"ż", "ó", "ł", "w"}), std::pair(std::string(""), true));
}

TEST(StopStrings, HoldsBackOnlyWhatMayStartOne) {
  StopStrings s({"abc"});
  EXPECT_EQ(s.push("xa"), "x");   // "a" may begin "abc"
  EXPECT_EQ(s.push("b"), "");     // "ab" too
  EXPECT_EQ(s.push("d"), "abd");  // not any more
  EXPECT_FALSE(s.stopped());
  EXPECT_EQ(s.push("ab"), "");
  EXPECT_EQ(s.flush(), "ab");  // generation ended without a stop: the rest is shown
  EXPECT_EQ(s.text(), "xabdab");
}

TEST(StopStrings, NoStopsShowEverything) {
  EXPECT_EQ(stream({}, {"a", "b"}), std::pair(std::string("ab"), false));
  EXPECT_EQ(stream({""}, {"a", "b"}), std::pair(std::string("ab"), false));  // an empty stop is ignored
}

// Byte tokens split characters: what is shown never ends inside one that later bytes may finish
// ("ż" is C5 BC, "✓" E2 9C 93, "😀" F0 9F 98 80), so that each piece shown is whole UTF-8.
TEST(StopStrings, HoldsBackTheFirstBytesOfACharacter) {
  StopStrings s({});
  EXPECT_EQ(s.push("a\xC5"), "a");
  EXPECT_EQ(s.push("\xBC"), "ż");
  EXPECT_EQ(s.push("\xF0"), "");
  EXPECT_EQ(s.push("\x9F\x98"), "");
  EXPECT_EQ(s.push("\x80!\xE2\x9C"), "😀!");
  EXPECT_EQ(s.push("\x93"), "✓");
  // Bytes that begin no character are shown at once, as the whole text shows them.
  EXPECT_EQ(s.push("\x80"), "\x80");
  EXPECT_EQ(s.push("x\xFF"), "x\xFF");
  EXPECT_EQ(s.push("\xC0"), "\xC0");
  // A character cut off by the end of generation: its bytes are flushed as they are.
  EXPECT_EQ(s.push("\xE2\x9C"), "");
  EXPECT_EQ(s.flush(), "\xE2\x9C");
  EXPECT_EQ(s.text(), "aż😀!✓\x80x\xFF\xC0\xE2\x9C");
}

TEST(StopStrings, AStopStringAfterASplitCharacter) {
  EXPECT_EQ(stream({"ł!"}, {"\xC5", "\x82", "ó", "\xC5", "\x82", "!", "x"}), std::pair(std::string("łó"), true));
  EXPECT_EQ(stream({"!"}, {"\xF0\x9F", "\x98\x80", "!"}), std::pair(std::string("😀"), true));
}

}  // namespace
}  // namespace potop
