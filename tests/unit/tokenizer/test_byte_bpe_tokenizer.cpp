// The byte_bpe tokenizer on a small vocabulary made here (tests/cli/tokenizers_gpt2.sh compares it
// with GPT-2's own encoder on GPT-2's real files).
#include "tokenizer/byte_bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/multilingual.h"
#include "support/round_trip.h"
#include "support/testing.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/byte_tokenizer.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/special_texts.h"
#include "tokenizer/utf8.h"

namespace potop {
namespace {

// The 256 bytes in GPT-2's order (ids 0..255 here), then each merge's result, then extras.
std::vector<std::string> byte_tokens() {
  std::vector<std::string> t;
  for (int b = 0; b < 256; ++b) t.push_back(byte_level_char(static_cast<unsigned char>(b)));
  return t;
}

ByteBpeTokenizer make(const std::vector<std::string>& merges, const std::vector<std::string>& extra = {},
                      ByteBpeOptions options = {}) {
  std::vector<std::string> tokens = byte_tokens();
  for (const std::string& m : merges) {
    const size_t space = m.find(' ');
    tokens.push_back(m.substr(0, space) + m.substr(space + 1));
  }
  tokens.insert(tokens.end(), extra.begin(), extra.end());
  return ByteBpeTokenizer(tokens, merges, "test vocabulary", std::move(options));
}

int byte_id(char c) {  // the id of byte c in byte_tokens()
  return static_cast<unsigned char>(c);
}

TEST(ByteBpeTokenizer, MergesTheLowestRankFirst) {
  // "h e" (rank 0), "l l" (1), "he ll" (2), "Ġ t" (3), "Ġt he" (4): ids 256.. in that order.
  const ByteBpeTokenizer tok = make({"h e", "l l", "he ll", "Ġ t", "Ġt he"});
  EXPECT_EQ(tok.encode("hello"), (std::vector<int>{258, byte_id('o')}));  // he, ll -> hell, o
  EXPECT_EQ(tok.encode(" the"), std::vector<int>{260});                   // Ġt, then Ġt + he
  // One pair merged wherever it occurs, left to right and not overlapping, as GPT-2's loop does.
  EXPECT_EQ(tok.encode("lll"), (std::vector<int>{257, byte_id('l')}));
  EXPECT_EQ(tok.piece(260), "Ġthe");
  EXPECT_EQ(tok.decode_one(260), " the");
}

TEST(ByteBpeTokenizer, NoMergeCrossesASplit) {
  // "t '" and "s 1" would join across the pieces "it" "'s" " 1": the split keeps them apart.
  const ByteBpeTokenizer tok = make({"t '", "s Ġ", "' s", "Ġ 1"});
  const std::vector<int> ids = tok.encode("it's 1");
  EXPECT_EQ(ids, (std::vector<int>{byte_id('i'), byte_id('t'), 258, 259}));
  // Whitespace: a run before a word leaves its last space to the word.
  const ByteBpeTokenizer spaces = make({"Ġ Ġ", "Ġ a"});
  EXPECT_EQ(spaces.encode("   a"), (std::vector<int>{256, 257}));  // "  " then " a"
  EXPECT_EQ(spaces.encode("a   "), (std::vector<int>{byte_id('a'), 256, byte_id(' ')}));  // a run at the end is one piece
}

TEST(ByteBpeTokenizer, RoundTripsAnyTextAndCountsCharacters) {
  const ByteBpeTokenizer tok = make({"Ġ t", "h e", "Ġt he", "Å ¼", "Ã ³"});
  std::string all = testing::multilingual_text(20000);
  for (const std::string& t : testing::unseen_texts()) all += t + "\n";
  const std::vector<int> ids = testing::expect_exact_round_trip(tok, all);
  long chars = 0;
  for (const int id : ids) chars += tok.char_count(id);
  EXPECT_EQ(chars, static_cast<long>(utf8_decode(all, "text").size()));
  EXPECT_EQ(tok.decode(std::vector<int>{0xC5}), "\xEF\xBF\xBD");  // a lone lead byte: U+FFFD
  EXPECT_THROW(tok.encode("a\xFF"), Error);
  EXPECT_FALSE(tok.can_encode("a\xFF"));
  EXPECT_THROW(tok.decode_one(tok.size()), Error);
}

TEST(ByteBpeTokenizer, SpecialTokensAreTheVocabularys) {
  const ByteBpeTokenizer plain = make({"h e"});
  EXPECT_EQ(plain.specials(), SpecialTokens{});
  const ByteBpeTokenizer gpt2 = make({"h e"}, {"<|endoftext|>"});
  EXPECT_EQ(gpt2.specials().bos, 257);
  EXPECT_EQ(gpt2.specials().eos, 257);
  EXPECT_EQ(gpt2.specials().pad, -1);
  EXPECT_EQ(gpt2.decode_one(257), "<|endoftext|>");
  EXPECT_EQ(gpt2.encode("<|endoftext|>").size(), 13u);  // its characters (bytes: no merges), as GPT-2's encoder
  // A token outside the byte alphabet stands for its own text.
  const ByteBpeTokenizer added = make({}, {"<|im start|>"});
  EXPECT_EQ(added.decode_one(256), "<|im start|>");
  EXPECT_EQ(added.piece(256), "<|im▁start|>");
  // potop's own kinds: <pad> 0 .. <unk> 3, and char none.
  EXPECT_EQ(ByteTokenizer().specials(), kPotopSpecials);
  EXPECT_EQ(CharTokenizer(std::vector<char32_t>{U'a'}).specials(), SpecialTokens{});
}

TEST(ByteBpeTokenizer, JsonAndFilesGiveItBack) {
  const ByteBpeTokenizer tok = make({"h e", "l l", "he ll"}, {"<|endoftext|>"});
  const std::unique_ptr<Tokenizer> from_json = tokenizer_from_json(tok.to_json(), "json");
  EXPECT_EQ(from_json->hash(), tok.hash());
  EXPECT_EQ(from_json->encode("hello"), tok.encode("hello"));
  const testing::TempDir dir("byte_bpe_files");
  save_tokenizer_dir(tok, dir);
  const std::unique_ptr<Tokenizer> loaded = load_tokenizer_dir(dir);
  EXPECT_EQ(loaded->kind(), "byte_bpe");
  EXPECT_EQ(loaded->hash(), tok.hash());
  EXPECT_NE(make({"h e", "l l"}).hash(), make({"l l", "h e"}).hash());  // the merges' order counts
}

TEST(ByteBpeTokenizer, SplitExpressionsApplyInTurnAndKeepTheTextBetween) {
  // Digits one at a time, then GPT-2's expression on each piece (SmolLM's pre-tokenizer): "12"
  // is two pieces, so "1 2" never merges; the text between the digits is split by GPT-2's.
  ByteBpeOptions smollm;
  smollm.split = {"\\p{N}", ByteBpeOptions::gpt2_split_expression()};
  const ByteBpeTokenizer digits = make({"1 2", "Ġ a"}, {}, smollm);
  EXPECT_EQ(digits.encode("12 a"), (std::vector<int>{byte_id('1'), byte_id('2'), 257}));
  EXPECT_EQ(make({"1 2", "Ġ a"}).encode("12 a"), (std::vector<int>{256, 257}));  // GPT-2's alone: "12" one piece
  // A split whose matches leave gaps: the gaps are pieces too (Hugging Face's "Isolated").
  ByteBpeOptions commas;
  commas.split = {","};
  const ByteBpeTokenizer isolated = make({"a b", "b ,"}, {}, commas);
  EXPECT_EQ(isolated.encode("ab,ab"), (std::vector<int>{256, byte_id(','), 256}));  // "ab" "," "ab": b, never merges
  ByteBpeOptions broken;
  broken.split = {"(\\p{L"};
  EXPECT_THROW(make({}, {}, broken), Error);  // an expression ICU cannot compile
}

TEST(ByteBpeTokenizer, IgnoreMergesTakesAWholePieceThatIsAToken) {
  // "abc" is a token no merge sequence reaches from "a b" (rank 0) and "bc"'s absence.
  ByteBpeOptions o;
  o.ignore_merges = true;
  const ByteBpeTokenizer whole = make({"a b"}, {"abc"}, o);
  EXPECT_EQ(whole.encode("abc"), std::vector<int>{257});
  EXPECT_EQ(make({"a b"}, {"abc"}).encode("abc"), (std::vector<int>{256, byte_id('c')}));
}

TEST(ByteBpeTokenizer, OptionsTravelWithItAndGpt2sLeaveItsHashAlone) {
  ByteBpeOptions o;
  o.split = {"\\p{N}{1,3}", ByteBpeOptions::gpt2_split_expression()};
  o.ignore_merges = true;
  o.bos = "<s>";
  o.eos = "</s>";
  const ByteBpeTokenizer tok = make({"h e"}, {"<s>", "</s>"}, o);
  EXPECT_EQ(tok.specials().bos, 257);
  EXPECT_EQ(tok.specials().eos, 258);
  EXPECT_NE(tok.hash(), make({"h e"}, {"<s>", "</s>"}).hash());
  EXPECT_EQ(make({"h e"}).to_json().contains("options"), false);  // GPT-2's: the JSON and hash of before
  const std::unique_ptr<Tokenizer> from_json = tokenizer_from_json(tok.to_json(), "json");
  EXPECT_EQ(from_json->hash(), tok.hash());
  const testing::TempDir dir("byte_bpe_options");
  save_tokenizer_dir(tok, dir);
  const std::unique_ptr<Tokenizer> loaded = load_tokenizer_dir(dir);
  EXPECT_EQ(loaded->hash(), tok.hash());
  EXPECT_EQ(loaded->encode("1234"), tok.encode("1234"));
  // As a tokenizer.json pre-tokenizer and back: the same options.
  nlohmann::json hf = {{"model", {{"type", "BPE"}, {"vocab", nlohmann::json::object()}, {"merges", {"h e"}}, {"ignore_merges", true}}},
                       {"pre_tokenizer", tok.hf_pre_tokenizer()},
                       {"decoder", {{"type", "ByteLevel"}}}};
  for (int id = 0; id < tok.size(); ++id) hf["model"]["vocab"][tok.token(id)] = id;
  const auto back = ByteBpeTokenizer::from_hf_json(hf, {{"bos_token", "<s>"}, {"eos_token", {{"content", "</s>"}}}}, "hf");
  EXPECT_EQ(back->options(), o);
  EXPECT_EQ(back->hash(), tok.hash());
  EXPECT_EQ(make({"h e"}).hf_pre_tokenizer()["type"], "ByteLevel");  // GPT-2's: ByteLevel's own expression
}

// tokenizer.json's added tokens marked special (Llama 3's header tokens) are kept as special:
// a chat prompt that writes them out gets their ids; plain encoding keeps them as text; they
// travel with the tokenizer (JSON, files) and change its hash only where there are some.
TEST(ByteBpeTokenizer, AddedSpecialTokensAreReadBackFromAChatPrompt) {
  nlohmann::json hf = {{"model", {{"type", "BPE"}, {"vocab", nlohmann::json::object()}, {"merges", {"h e"}}}},
                       {"pre_tokenizer", {{"type", "ByteLevel"}}},
                       {"decoder", {{"type", "ByteLevel"}}}};
  const ByteBpeTokenizer plain = make({"h e"});
  for (int id = 0; id < plain.size(); ++id) hf["model"]["vocab"][plain.token(id)] = id;
  const int header = plain.size(), end = plain.size() + 1, extra = plain.size() + 2;
  hf["added_tokens"] = {{{"id", header}, {"content", "<|start_header_id|>"}, {"special", true}},
                        {{"id", end}, {"content", "<|eot_id|>"}, {"special", true}},
                        {{"id", extra}, {"content", "hello world"}, {"special", false}}};
  const auto tok = ByteBpeTokenizer::from_hf_json(hf, {{"eos_token", "<|eot_id|>"}}, "hf");
  EXPECT_EQ(tok->specials().bos, -1);
  EXPECT_EQ(tok->special_ids(), (std::vector<int>{end, header}));  // the eos, then the other specials
  const std::vector<int> ids = encode_with_specials(*tok, "<|start_header_id|>he<|eot_id|>", "prompt", Unknown::kError, nullptr);
  EXPECT_EQ(ids, (std::vector<int>{header, tok->encode("he")[0], end}));
  EXPECT_GT(tok->encode("<|eot_id|>").size(), 1u);  // plain encoding: its characters
  EXPECT_EQ(tokenizer_from_json(tok->to_json(), "json")->special_ids(), tok->special_ids());
  EXPECT_EQ(tok->options().special, (std::vector<std::string>{"<|start_header_id|>"}));  // eos is named already
  ByteBpeOptions o;
  o.special = {"<|nowhere|>"};
  EXPECT_THROW(make({"h e"}, {}, o), Error);  // a special token the vocabulary lacks
}

TEST(ByteBpeTokenizer, LlamaCppNamesItsSplitsByModel) {
  for (const char* name : {"gpt-2", "llama-bpe", "qwen2", "smollm"}) {
    ByteBpeOptions o;
    ASSERT_TRUE(set_llama_cpp_pre_tokenizer(name, o)) << name;
    EXPECT_EQ(llama_cpp_pre_tokenizer(o), name);
    EXPECT_NO_THROW(make({}, {}, o)) << name;  // ICU compiles it
  }
  EXPECT_EQ(llama_cpp_pre_tokenizer(ByteBpeOptions{}), "gpt-2");
  ByteBpeOptions o;
  EXPECT_FALSE(set_llama_cpp_pre_tokenizer("falcon", o));
  EXPECT_EQ(o, ByteBpeOptions{});
  o.ignore_merges = true;  // GPT-2's expression with ignore_merges: no name
  EXPECT_EQ(llama_cpp_pre_tokenizer(o), "");
  ByteBpeOptions llama3;
  set_llama_cpp_pre_tokenizer("llama-bpe", llama3);
  EXPECT_EQ(make({}, {}, llama3).encode("12345").size(), 5u);  // "123" "45", no merges: bytes
  EXPECT_TRUE(llama3.ignore_merges);
}

TEST(ByteBpeTokenizer, RefusesVocabulariesItCannotUse) {
  auto refused = [](const std::vector<std::string>& tokens, const std::vector<std::string>& merges) {
    return testing::error_message([&] { ByteBpeTokenizer(tokens, merges, "v"); });
  };
  std::vector<std::string> tokens = byte_tokens();
  EXPECT_NE(refused({tokens.begin() + 1, tokens.end()}, {}).find("lacks the byte <0x00>"), std::string::npos);
  EXPECT_NE(refused(tokens, {"h e"}).find("merge 1 \"h e\": the vocabulary lacks \"he\""), std::string::npos);
  EXPECT_NE(refused(tokens, {"he"}).find("two tokens separated by one space"), std::string::npos);
  tokens.push_back("a");
  EXPECT_NE(refused(tokens, {}).find("\"a\" appears twice"), std::string::npos);
}

}  // namespace
}  // namespace potop
