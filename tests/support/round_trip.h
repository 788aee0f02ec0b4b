// The round-trip contract every tokenizer's tests check (tokenizer.h): decode(encode(text)) ==
// text, streaming token by token gives the same bytes, and the tokens' char_count sums to the
// text's code points (what bits/char divides by).
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace potop::testing {

// The ids of text, after checking the contract on them.
inline std::vector<int> expect_exact_round_trip(const Tokenizer& tok, const std::string& text) {
  const std::vector<int> ids = tok.encode(text);
  EXPECT_EQ(tok.decode(ids), text);
  std::string streamed;
  long chars = 0;
  for (const int id : ids) streamed += tok.decode_one(id), chars += tok.char_count(id);
  EXPECT_EQ(streamed, text);
  EXPECT_EQ(chars, static_cast<long>(utf8_decode(text, "t").size()));
  EXPECT_TRUE(tok.can_encode(text));
  return ids;
}

}  // namespace potop::testing
