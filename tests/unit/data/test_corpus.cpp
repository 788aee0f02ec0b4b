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
  if (path.empty()) GTEST_SKIP() << (testing::shared_dir() / "data" / "potop.txt").string() << " not found";
  const std::string bytes = read_text_file(path);
  // The corpus is fixed (../shared/data/SOURCES.md, sha256 f890ada7…e0cc): its FNV-1a-64, computed
  // apart from potop by
  //   /usr/bin/python3 -c "import functools; print(hex(functools.reduce(lambda h, b: ((h ^ b) *
  //     0x100000001b3) % 2**64, open('../shared/data/potop.txt', 'rb').read(), 0xcbf29ce484222325)))"
  // checks both that read_text_file returns the file's bytes unchanged and that fnv1a64 is FNV-1a.
  EXPECT_EQ(bytes.size(), 2719094u);
  EXPECT_EQ(fnv1a64(bytes), 0xa4b05e96dccb7bf4ull);
  const std::u32string text = utf8_decode(bytes, path.string());
  EXPECT_EQ(text.size(), 2493492u);
  EXPECT_EQ(read_utf8_file(path), text);
  EXPECT_EQ(utf8_encode(text), bytes);

  const auto tok = CharTokenizer::from_text(text);
  EXPECT_EQ(tok.size(), 95);
  const std::vector<int> ids = tok.encode(text, path.string());
  EXPECT_EQ(ids.size(), text.size());
  EXPECT_EQ(tok.decode(ids), bytes);
}

}  // namespace
}  // namespace potop
