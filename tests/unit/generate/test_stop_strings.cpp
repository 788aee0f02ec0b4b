// Stop strings on streamed text: nothing of a stop string is ever shown, and nothing else is
// held back longer than it could still be the start of one.
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

}  // namespace
}  // namespace potop
