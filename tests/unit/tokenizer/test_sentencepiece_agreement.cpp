// potop's SentencePiece tokenizers agree with SentencePiece's own command-line tools (Debian's
// `sentencepiece` package): a model spm_train makes with potop's flags, imported, encodes every
// line of a multilingual text to exactly spm_encode's pieces and ids; and potop's in-process
// training gives the same vocabulary (pieces and scores, in order) as spm_train on the same text
// with the same flags — SentencePiece's training is deterministic for a fixed text, flags and
// thread count (checked here and in SentencePieceTraining.IsDeterministic).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/multilingual.h"
#include "support/testing.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/special_texts.h"

namespace potop {
namespace {

namespace fs = std::filesystem;

bool have(const char* tool) { return std::system(("command -v " + std::string(tool) + " >/dev/null 2>&1").c_str()) == 0; }

// Runs a shell command; its standard output, or a test failure when it fails.
std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) {
    ADD_FAILURE() << "cannot run " << command;
    return out;
  }
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = ::pclose(pipe);
  EXPECT_EQ(status, 0) << command;
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string spm_train_flags(const std::string& kind, int vocab_size) {
  std::string flags = "--model_type=" + kind + " --vocab_size=" + std::to_string(vocab_size) +
                      " --num_threads=" + std::to_string(SentencePieceTrainOptions{}.threads) + " --minloglevel=1";
  for (const auto& [name, value] : sentencepiece_flags()) flags += " '--" + name + "=" + value + "'";
  return flags;
}

class SentencePieceAgreement : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!have("spm_train") || !have("spm_encode"))
      GTEST_SKIP() << "SentencePiece's spm_train and spm_encode are not installed (apt-get install sentencepiece)";
    dir_ = testing::TempDir("spm_agreement_" + GetParam());
    text_ = testing::multilingual_text(150000, 11);
    testing::write_file(dir_ / "train.txt", text_);
  }
  testing::TempDir dir_;
  std::string text_;
};

TEST_P(SentencePieceAgreement, ImportedModelEncodesLikeSpmEncode) {
  const std::string kind = GetParam();
  run("spm_train --input=" + (dir_ / "train.txt").string() + " --model_prefix=" + (dir_ / "spm").string() + " " +
      spm_train_flags(kind, 800) + " 2>&1");
  const auto tok = SentencePieceTokenizer::load(dir_ / "spm.model");
  ASSERT_EQ(tok->kind(), kind);
  ASSERT_EQ(tok->size(), 800);
  EXPECT_TRUE(tok->encodes_by_word());  // so this checks potop's word cache against spm_encode
  // Held-out text in the same languages, plus scripts and characters the model never saw (byte
  // fallback), leading, trailing and double spaces, tabs and an empty line.
  std::string eval = testing::multilingual_text(30000, 12) + "\n";
  for (const std::string& t : testing::unseen_texts()) eval += t + "\n";
  testing::write_file(dir_ / "eval.txt", eval);
  const std::string model = (dir_ / "spm.model").string(), input = (dir_ / "eval.txt").string();
  const std::vector<std::string> spm_pieces = lines_of(run("spm_encode --model=" + model + " --output_format=piece < " + input));
  const std::vector<std::string> spm_ids = lines_of(run("spm_encode --model=" + model + " --output_format=id < " + input));
  const std::vector<std::string> lines = lines_of(eval);
  ASSERT_EQ(spm_pieces.size(), lines.size());
  ASSERT_EQ(spm_ids.size(), lines.size());
  int byte_pieces = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::vector<int> ids = tok->encode(lines[i]);
    std::string pieces, numbers;
    for (size_t k = 0; k < ids.size(); ++k) {
      if (k > 0) pieces += ' ', numbers += ' ';
      pieces += tok->piece(ids[k]);
      numbers += std::to_string(ids[k]);
      byte_pieces += ids[k] >= kSpecialCount && ids[k] < kSpecialCount + 256;
    }
    EXPECT_EQ(pieces, spm_pieces[i]) << "line " << i + 1 << ": " << lines[i];
    EXPECT_EQ(numbers, spm_ids[i]) << "line " << i + 1 << ": " << lines[i];
    EXPECT_EQ(tok->decode(ids), lines[i]);
  }
  EXPECT_GT(byte_pieces, 20);  // byte fallback was exercised
  // The whole text at once (newlines included) is the lines' ids joined by the newline piece.
  EXPECT_EQ(tok->decode(tok->encode(eval)), eval);
}

TEST_P(SentencePieceAgreement, PotopTrainsWhatSpmTrainTrains) {
  const std::string kind = GetParam();
  run("spm_train --input=" + (dir_ / "train.txt").string() + " --model_prefix=" + (dir_ / "spm").string() + " " +
      spm_train_flags(kind, 800) + " 2>&1");
  const auto theirs = SentencePieceTokenizer::load(dir_ / "spm.model");
  const auto ours = SentencePieceTokenizer::train(text_, "train.txt", {.kind = kind, .vocab_size = 800});
  ASSERT_EQ(ours->size(), theirs->size());
  int differ = 0;
  for (int id = 0; id < ours->size(); ++id) differ += ours->piece(id) != theirs->piece(id);
  EXPECT_EQ(differ, 0) << kind << ": " << differ << " of " << ours->size() << " pieces differ";
  // The vocab files (piece TAB score) match spm_train's line for line.
  ours->save_files(dir_);
  std::ifstream mine(dir_ / "tokenizer.vocab"), spm(dir_ / "spm.vocab");
  std::stringstream a, b;
  a << mine.rdbuf(), b << spm.rdbuf();
  const auto ours_lines = lines_of(a.str()), spm_lines = lines_of(b.str());
  ASSERT_EQ(ours_lines.size(), spm_lines.size());
  for (size_t i = 0; i < ours_lines.size(); ++i) {
    // The piece must match exactly; the score as printed (spm: %g-like) within rounding.
    const auto tab_a = ours_lines[i].find('\t'), tab_b = spm_lines[i].find('\t');
    ASSERT_EQ(ours_lines[i].substr(0, tab_a), spm_lines[i].substr(0, tab_b)) << "line " << i;
    EXPECT_NEAR(std::stod(ours_lines[i].substr(tab_a + 1)), std::stod(spm_lines[i].substr(tab_b + 1)), 1e-4)
        << "line " << i;
  }
}

// Llama 2's layout, spm_train's defaults: <unk> 0, <s> 1, </s> 2, no <pad>, a "▁" put before the
// text. Imported, it keeps those ids, encodes as spm_encode does, and a chat prompt's written-out
// <s> and </s> are those tokens.
TEST_P(SentencePieceAgreement, LlamaTwoLayoutKeepsItsOwnSpecialIds) {
  const std::string kind = GetParam();
  run("spm_train --input=" + (dir_ / "train.txt").string() + " --model_prefix=" + (dir_ / "llama2").string() +
      " --model_type=" + kind + " --vocab_size=800 --byte_fallback=true --character_coverage=1.0 --minloglevel=1 2>&1");
  const auto tok = SentencePieceTokenizer::load(dir_ / "llama2.model");
  EXPECT_EQ(tok->specials(), (SpecialTokens{.pad = -1, .bos = 1, .eos = 2, .unk = 0}));
  EXPECT_TRUE(tok->adds_dummy_prefix());
  EXPECT_FALSE(tok->encodes_by_word());
  std::string eval;
  for (const std::string& t : testing::unseen_texts()) eval += t + "\n";
  eval += testing::multilingual_text(5000, 13) + "\n";
  testing::write_file(dir_ / "eval.txt", eval);
  const std::vector<std::string> spm_ids =
      lines_of(run("spm_encode --model=" + (dir_ / "llama2.model").string() + " --output_format=id < " +
                   (dir_ / "eval.txt").string()));
  const std::vector<std::string> lines = lines_of(eval);
  ASSERT_EQ(spm_ids.size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string numbers;
    for (const int id : tok->encode(lines[i])) {
      if (!numbers.empty()) numbers += ' ';
      numbers += std::to_string(id);
    }
    EXPECT_EQ(numbers, spm_ids[i]) << "line " << i + 1 << ": " << lines[i];
  }
  const std::vector<int> hi = tok->encode("hi");
  std::vector<int> want = {1};
  want.insert(want.end(), hi.begin(), hi.end());
  want.push_back(2);
  EXPECT_EQ(encode_with_specials(*tok, "<s>hi</s>", "prompt", Unknown::kError, nullptr), want);
}

INSTANTIATE_TEST_SUITE_P(Kinds, SentencePieceAgreement, ::testing::Values("bpe", "unigram"));

}  // namespace
}  // namespace potop
