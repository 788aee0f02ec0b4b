// The shared Polish corpus (../shared/data/potop.txt): decoded, tokenized and restored exactly.
#include <gtest/gtest.h>

#include "core/hash.h"
#include "data/text_file.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/utf8.h"
#include "support/testing.h"

namespace potop {
namespace {

TEST(Corpus, DecodesTokenizesAndRoundTrips) {
  const auto path = testing::shared_corpus();
  if (path.empty()) GTEST_SKIP() << "../shared/data/potop.txt not found";
  const std::string bytes = read_text_file(path);
  const std::u32string text = utf8_decode(bytes, path.string());
  EXPECT_EQ(text.size(), 2493492u);
  EXPECT_EQ(read_utf8_file(path), text);
  EXPECT_EQ(utf8_encode(text), bytes);

  const auto tok = CharTokenizer::from_text(text);
  EXPECT_EQ(tok.size(), 95);
  const std::vector<int> ids = tok.encode(text, path.string());
  EXPECT_EQ(ids.size(), text.size());
  EXPECT_EQ(tok.decode(ids), bytes);
  EXPECT_NE(fnv1a64(bytes), kFnv1a64Offset);
}

}  // namespace
}  // namespace potop
