// The one list of a tokenizer's files (tokenizer_file, all_tokenizer_files) that model
// directories, --force, stale-temporary cleanup and error messages rely on matches what each
// kind's save_files really writes and load_tokenizer reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/multilingual.h"
#include "support/testing.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/train_tokenizer.h"

namespace potop {
namespace {

namespace fs = std::filesystem;

TEST(TokenizerFiles, ListIsWhatEveryKindWritesAndReads) {
  const std::string text = testing::multilingual_text(20000);
  const std::vector<std::string> known = all_tokenizer_files();
  for (const TokenizerKind kind : {TokenizerKind::kChar, TokenizerKind::kByte, TokenizerKind::kWord,
                                   TokenizerKind::kBpe, TokenizerKind::kUnigram}) {
    TokenizerTrainOptions options;
    options.kind = kind;
    if (kind == TokenizerKind::kBpe || kind == TokenizerKind::kUnigram) options.vocab_size = 400;
    const std::unique_ptr<Tokenizer> tok = train_tokenizer(text, "t", options);
    const testing::TempDir dir("tokenizer_files_" + tok->kind());
    tok->save_files(dir);
    std::vector<std::string> written;
    for (const auto& entry : fs::directory_iterator(dir)) written.push_back(entry.path().filename().string());
    for (const std::string& name : written)
      EXPECT_NE(std::find(known.begin(), known.end(), name), known.end()) << tok->kind() << " writes " << name;
    const std::string main_file = tokenizer_file(tok->kind());
    if (main_file.empty()) {
      EXPECT_TRUE(written.empty()) << tok->kind();
      EXPECT_EQ(tokenizer_file_in(dir, tok->kind()), dir);
    } else {
      EXPECT_NE(std::find(written.begin(), written.end(), main_file), written.end()) << tok->kind();
      EXPECT_EQ(tokenizer_file_in(dir, tok->kind()), dir / main_file);
    }
    EXPECT_EQ(load_tokenizer(dir, tok->kind())->hash(), tok->hash()) << tok->kind();
  }
}

}  // namespace
}  // namespace potop
