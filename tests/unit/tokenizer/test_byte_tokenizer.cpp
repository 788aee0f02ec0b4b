#include "tokenizer/byte_tokenizer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/multilingual.h"
#include "support/round_trip.h"
#include "support/testing.h"
#include "tokenizer/utf8.h"

namespace potop {
namespace {

TEST(ByteTokenizer, FixedIds) {
  const ByteTokenizer tok;
  EXPECT_EQ(tok.size(), 260);
  EXPECT_EQ(tok.kind(), "byte");
  EXPECT_EQ(tok.encode("A"), std::vector<int>{4 + 'A'});
  EXPECT_EQ(tok.encode("ż"), (std::vector<int>{4 + 0xC5, 4 + 0xBC}));
  EXPECT_EQ(tok.piece(kPadId), "<pad>");
  EXPECT_EQ(tok.piece(kBosId), "<bos>");
  EXPECT_EQ(tok.piece(kEosId), "<eos>");
  EXPECT_EQ(tok.piece(kUnkId), "<unk>");
  EXPECT_EQ(tok.piece(4 + ' '), "▁");
  EXPECT_EQ(tok.piece(4 + '\n'), "<0x0A>");
  EXPECT_EQ(tok.piece(4 + 0xC5), "<0xC5>");
  EXPECT_EQ(tok.piece(4 + 'a'), "a");
}

TEST(ByteTokenizer, RoundTripsAnyText) {
  const ByteTokenizer tok;
  std::string all = testing::multilingual_text(20000);
  for (const std::string& t : testing::unseen_texts()) all += t + "\n";
  for (const std::string& text : {all, std::string("Zażółć"), std::string("Ёж"), std::string("我能"),
                                  std::string("👨‍👩‍👧"), std::string()}) {
    EXPECT_EQ(testing::expect_exact_round_trip(tok, text).size(), text.size());
  }
}

TEST(ByteTokenizer, InvalidUtf8IsRefusedAndSampledBytesAreRepaired) {
  const ByteTokenizer tok;
  EXPECT_FALSE(tok.can_encode("a\xFF"));
  EXPECT_NE(testing::error_message([&] { tok.encode("ab\xC5", "prompt"); }).find("prompt"), std::string::npos);
  // A model may sample a lone continuation byte: decode still gives valid UTF-8.
  EXPECT_EQ(tok.decode(std::vector<int>{4 + 'a', 4 + 0xBC, 4 + 'b'}), "a\uFFFDb");
  EXPECT_EQ(tok.decode(std::vector<int>{kBosId, 4 + 'a', kEosId, kPadId}), "a");
  EXPECT_THROW(tok.decode(std::vector<int>{260}), Error);
  EXPECT_THROW(tok.decode_one(-1), Error);
}

TEST(ByteTokenizer, JsonAndHashAreStable) {
  const ByteTokenizer a, b;
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(a.to_json(), nlohmann::json({{"kind", "byte"}}));
  const auto back = tokenizer_from_json(a.to_json(), "test");
  EXPECT_EQ(back->kind(), "byte");
  EXPECT_EQ(back->hash(), a.hash());
}

}  // namespace
}  // namespace potop
