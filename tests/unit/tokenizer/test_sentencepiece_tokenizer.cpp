#include "tokenizer/sentencepiece_tokenizer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/multilingual.h"
#include "support/round_trip.h"
#include "support/testing.h"
#include "tokenizer/train_tokenizer.h"
#include "tokenizer/utf8.h"

namespace potop {
namespace {

// One small model of each kind, trained once for the whole file (training takes a second).
const SentencePieceTokenizer& model(const std::string& kind) {
  static const std::string text = testing::multilingual_text(150000);
  static const auto bpe = SentencePieceTokenizer::train(text, "text", {.kind = "bpe", .vocab_size = 800});
  static const auto unigram = SentencePieceTokenizer::train(text, "text", {.kind = "unigram", .vocab_size = 800});
  return kind == "bpe" ? *bpe : *unigram;
}

class SentencePiece : public ::testing::TestWithParam<std::string> {};

TEST_P(SentencePiece, SpecialAndByteIdsArePotops) {
  const SentencePieceTokenizer& tok = model(GetParam());
  EXPECT_EQ(tok.kind(), GetParam());
  EXPECT_EQ(tok.size(), 800);
  EXPECT_TRUE(tok.byte_fallback());
  for (int id = 0; id < kSpecialCount; ++id) EXPECT_EQ(tok.piece(id), kSpecialPieces[id]);
  EXPECT_EQ(tok.piece(4), "<0x00>");
  EXPECT_EQ(tok.piece(4 + 0x0A), "<0x0A>");
  EXPECT_EQ(tok.piece(259), "<0xFF>");
  EXPECT_EQ(tok.decode_one(4 + 0xC5), "\xC5");
  EXPECT_EQ(tok.decode_one(kBosId), "");
}

TEST_P(SentencePiece, RoundTripsTrainingAndUnseenText) {
  const SentencePieceTokenizer& tok = model(GetParam());
  std::string unseen;
  for (const std::string& t : testing::unseen_texts()) unseen += t + "\n";
  for (const std::string& text : {testing::multilingual_text(20000, 7), unseen, std::string("\n\n x \n"),
                                  std::string("Zażółć gęślą jaźń"), std::string("Съешь же ещё"),
                                  std::string("鬱龘齉"), std::string("🧑🏿‍🔬🏳️‍🌈"), std::string()}) {
    testing::expect_exact_round_trip(tok, text);
  }
  // Characters it never saw go through byte fallback: 鬱 is 3 byte pieces.
  EXPECT_EQ(tok.encode("鬱"), (std::vector<int>{4 + 0xE9, 4 + 0xAC, 4 + 0xB1}));
}

TEST_P(SentencePiece, LearnsSubwords) {
  const SentencePieceTokenizer& tok = model(GetParam());
  const std::string text = testing::multilingual_text(20000, 7);
  // Fewer tokens than characters: on average a piece is more than 1.5 characters (about 2 for
  // unigram and 2.5 for bpe here, with 800 pieces of which 260 are specials and bytes).
  EXPECT_LT(tok.encode(text).size() * 3, utf8_decode(text, "t").size() * 2);
}

TEST_P(SentencePiece, SpaceMarkIsUnknown) {
  const SentencePieceTokenizer& tok = model(GetParam());
  EXPECT_FALSE(tok.can_encode("a\u2581b"));
  EXPECT_NE(testing::error_message([&] { tok.encode("a\u2581b", "prompt"); }).find("U+2581"), std::string::npos);
  UnknownReport report;
  EXPECT_EQ(tok.decode(tok.encode("a\u2581b", "t", Unknown::kReplace, &report)), "a b");
  EXPECT_EQ(report.count, 1);
}

TEST_P(SentencePiece, SavesLoadsAndEmbeds) {
  const SentencePieceTokenizer& tok = model(GetParam());
  const testing::TempDir dir("spm_" + GetParam());
  save_tokenizer_dir(tok, dir);
  EXPECT_TRUE(std::filesystem::exists(dir / "tokenizer.model"));
  EXPECT_TRUE(std::filesystem::exists(dir / "tokenizer.vocab"));
  const auto back = load_tokenizer_dir(dir);
  EXPECT_EQ(back->kind(), GetParam());
  EXPECT_EQ(back->hash(), tok.hash());
  const std::string text = "Zażółć gęślą jaźń, съешь 我能 😀";
  EXPECT_EQ(back->encode(text), tok.encode(text));
  const auto embedded = tokenizer_from_json(tok.to_json(), "checkpoint");
  EXPECT_EQ(embedded->hash(), tok.hash());
  EXPECT_EQ(embedded->encode(text), tok.encode(text));
  // The directory says one kind, the model is the other.
  testing::write_file(dir / "tokenizer.json", GetParam() == "bpe" ? R"({"kind": "unigram"})" : R"({"kind": "bpe"})");
  EXPECT_NE(testing::error_message([&] { load_tokenizer_dir(dir); }).find("tokenizer.model"), std::string::npos);
  // A corrupt model file is named.
  testing::write_file(dir / "tokenizer.json", R"({"kind": ")" + GetParam() + R"("})");
  testing::write_file(dir / "tokenizer.model", "not a model");
  const std::string message = testing::error_message([&] { load_tokenizer_dir(dir); });
  EXPECT_NE(message.find("tokenizer.model"), std::string::npos) << message;
  EXPECT_NE(message.find("not a SentencePiece model"), std::string::npos) << message;
  std::filesystem::remove(dir / "tokenizer.model");
  EXPECT_NE(testing::error_message([&] { load_tokenizer_dir(dir); }).find("not found"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Kinds, SentencePiece, ::testing::Values("bpe", "unigram"));

TEST(SentencePieceTraining, IsDeterministic) {
  const std::string text = testing::multilingual_text(60000, 3);
  for (const char* kind : {"bpe", "unigram"}) {
    const auto a = SentencePieceTokenizer::train(text, "t", {.kind = kind, .vocab_size = 500});
    const auto b = SentencePieceTokenizer::train(text, "t", {.kind = kind, .vocab_size = 500});
    EXPECT_EQ(a->hash(), b->hash()) << kind;
  }
}

TEST(SentencePieceTraining, RefusesBadOptions) {
  const std::string text = testing::multilingual_text(20000);
  EXPECT_NE(testing::error_message([&] { SentencePieceTokenizer::train(text, "t", {.kind = "bpe", .vocab_size = 100}); })
                .find("--vocab-size 100"),
            std::string::npos);
  EXPECT_NE(testing::error_message([&] {
              SentencePieceTokenizer::train(text, "t", {.kind = "bpe", .vocab_size = 3'000'000'000L});
            }).find("--vocab-size"),
            std::string::npos);
  EXPECT_NE(testing::error_message([&] { SentencePieceTokenizer::train("ab\xC5", "data.txt", {.kind = "bpe"}); })
                .find("data.txt"),
            std::string::npos);
  // More pieces than the text has: said in potop's terms, naming the text and the largest size.
  const std::string message =
      testing::error_message([&] { SentencePieceTokenizer::train("abc abc\n", "tiny.txt", {.kind = "bpe", .vocab_size = 5000}); });
  EXPECT_NE(message.find("--vocab-size 5000 is too large for tiny.txt"), std::string::npos) << message;
  EXPECT_EQ(message.find(".cc("), std::string::npos) << message;
  // Fewer pieces than the text's characters need: the smallest size that works, which does.
  const std::string polish = "Zażółć gęślą jaźń\n";
  const std::string small =
      testing::error_message([&] { SentencePieceTokenizer::train(polish, "pl.txt", {.kind = "unigram", .vocab_size = 261}); });
  EXPECT_NE(small.find("use --vocab-size 275 or more"), std::string::npos) << small;
  EXPECT_EQ(SentencePieceTokenizer::train(polish, "pl.txt", {.kind = "unigram", .vocab_size = 275})->size(), 275);
  // Nothing SentencePiece would learn (its unigram trainer aborts the process on such a text).
  EXPECT_NE(testing::error_message([&] { SentencePieceTokenizer::train("\t<unk>\n", "t.txt", {.kind = "unigram", .vocab_size = 300}); })
                .find("t.txt: no character to learn"),
            std::string::npos);
}

TEST(TrainTokenizer, EveryKind) {
  const std::string text = testing::multilingual_text(40000);
  for (const char* kind : {"char", "byte", "word", "bpe", "unigram"}) {
    TokenizerTrainOptions options;
    ASSERT_TRUE(tokenizer_kind_choice(options.kind).set(kind));
    if (std::string(kind) == "bpe" || std::string(kind) == "unigram") options.vocab_size = 400;
    const auto tok = train_tokenizer(text, "t", options);
    EXPECT_EQ(tok->kind(), kind);
    EXPECT_EQ(tok->decode(tok->encode(text)), text) << kind;
  }
  TokenizerTrainOptions byte;
  byte.kind = TokenizerKind::kByte;
  byte.vocab_size = 300;
  EXPECT_NE(testing::error_message([&] { train_tokenizer(text, "t", byte); }).find("260"), std::string::npos);
  TokenizerTrainOptions bpe;
  bpe.kind = TokenizerKind::kBpe;
  EXPECT_NE(testing::error_message([&] { train_tokenizer(text, "t", bpe); }).find("--vocab-size"), std::string::npos);
  bpe.vocab_size = 400;
  EXPECT_NE(testing::error_message([&] { train_tokenizer("", "empty.txt", bpe); }).find("empty.txt"), std::string::npos);
}

TEST(Base64, RoundTrips) {
  for (const std::string& s : {std::string(), std::string("a"), std::string("ab"), std::string("abc"), std::string("abcd"), std::string("\x00\xFF\x10", 3)}) EXPECT_EQ(base64_decode(base64_encode(s), "t"), s);
  EXPECT_EQ(base64_encode("Man"), "TWFu");
  EXPECT_EQ(base64_encode("Ma"), "TWE=");
  EXPECT_THROW(base64_decode("TWF", "t"), Error);
  EXPECT_THROW(base64_decode("T!Fu", "t"), Error);
}

}  // namespace
}  // namespace potop
