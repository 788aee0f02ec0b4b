// A rendered chat prompt's special tokens, written out as text, become their ids; the text
// between them is encoded as any text is, and plain encode() leaves such texts as text.
#include <gtest/gtest.h>

#include "tokenizer/byte_tokenizer.h"
#include "tokenizer/special_texts.h"

namespace potop {
namespace {

TEST(SpecialTexts, WrittenOutSpecialsBecomeTheirIds) {
  const ByteTokenizer t;
  const int a = ByteTokenizer::kFirstByteId + 'a', b = ByteTokenizer::kFirstByteId + 'b';
  EXPECT_EQ(encode_with_specials(t, "<bos>a<eos><eos>b<pad", "prompt", Unknown::kError, nullptr),
            (std::vector<int>{kBosId, a, kEosId, kEosId, b, t.encode("<pad")[0], t.encode("<pad")[1], t.encode("<pad")[2],
                              t.encode("<pad")[3]}));
  EXPECT_EQ(encode_with_specials(t, "ab", "prompt", Unknown::kError, nullptr), t.encode("ab"));
  EXPECT_EQ(t.encode("<eos>").size(), 5u);  // plain encode keeps the text
  const auto texts = special_texts(t);
  ASSERT_EQ(texts.size(), 4u);
  EXPECT_EQ(texts[0].first.size(), 5u);  // longest first: <bos>, <eos>, <pad>, <unk> are all five bytes
}

}  // namespace
}  // namespace potop
