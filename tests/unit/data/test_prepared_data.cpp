// potop prepare's data directories: the format round-trips, ids are u16 or u32 by vocabulary,
// the splits match the raw-text path's, a parallel encode equals a serial one, and the samplers
// give identical batches from prepared shards and from the same ids in memory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/file_io.h"
#include "core/safetensors.h"
#include "core/threads.h"
#include "data/corpus_files.h"
#include "data/data_format.h"
#include "data/dataset.h"
#include "data/prepare.h"
#include "data/prepared_data.h"
#include "data/shard_writer.h"
#include "data/token_corpus.h"
#include "support/multilingual.h"
#include "support/testing.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/train_tokenizer.h"
#include "tokenizer/utf8.h"

namespace potop {
namespace {

namespace fs = std::filesystem;
using testing::error_message;
using testing::TempDir;
using testing::write_file;

// Lines of words, deterministic, with Polish letters so that ids are not just ASCII.
std::string make_text(size_t lines, uint32_t seed = 7) {
  static const char* words[] = {"kmicic", "ruszył", "z", "kopyta", "a", "pan", "zagłoba", "zawołał", "żywo", "mości"};
  std::string s;
  for (size_t l = 0; l < lines; ++l) {
    const int n = 3 + static_cast<int>(l % 7);
    for (int w = 0; w < n; ++w) {
      seed = seed * 1103515245u + 12345u;
      s += words[(seed >> 16) % 10];
      s += w + 1 < n ? " " : ".\n";
    }
  }
  return s;
}

std::vector<int> read_all(const PreparedData& d, DataSplit s) {
  std::vector<int> out(d.size(s));
  d.read(s, 0, out.size(), out.data());
  return out;
}

PrepareOptions options_for(const fs::path& data, const fs::path& out) {
  PrepareOptions o;
  o.data = data;
  o.out = out;
  return o;
}

TEST(DataFormat, ManifestRoundTrips) {
  DataManifest m;
  m.tokenizer_kind = "char";
  m.vocab_size = 70000;
  m.tokenizer_hash = 0x0123456789abcdefull;
  m.ids = IdType::kU32;
  m.split_by = SplitBy::kDocuments;
  m.val_fraction = 0.25;
  m.shard_tokens = 10;
  m.shards = {{"train-00000.bin", 10, 0xfedcba9876543210ull}, {"val-00000.bin", 3, 1}};
  m.train = {10, 2, {{0, 0, 10}}};
  m.val = {3, 1, {{1, 0, 3}}};
  m.documents = 3, m.bytes = 40, m.characters = 13, m.tokens = 13;
  m.source = "corpus";
  m.files = {{"corpus/a", 10, 4, 4, "train"}, {"corpus/b", 20, 6, 6, "train"}, {"corpus/c", 10, 3, 3, "val"}};
  const nlohmann::json j = to_json(m);
  const DataManifest r = manifest_from_json(nlohmann::json::parse(j.dump()), "data.json");
  EXPECT_EQ(to_json(r), j);
  EXPECT_EQ(r.tokenizer_hash, m.tokenizer_hash);
  EXPECT_EQ(r.shards[0].checksum, m.shards[0].checksum);
  EXPECT_EQ(r.ids, IdType::kU32);
}

TEST(DataFormat, InvalidManifestNamesTheKey) {
  DataManifest m;
  m.tokenizer_kind = "char";
  m.vocab_size = 5;
  m.shard_tokens = 4;
  m.shards = {{"tokens-00000.bin", 4, 0}};
  m.train = {4, 1, {{0, 0, 4}}};
  m.tokens = 4;
  const nlohmann::json good = to_json(m);
  auto error = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = good;
    edit(j);
    return error_message([&] { manifest_from_json(j, "d/data.json"); });
  };
  EXPECT_EQ(error([](auto& j) { j.erase("ids"); }), "d/data.json: \"ids\" is missing");
  EXPECT_EQ(error([](auto& j) { j["ids"] = "u8"; }), "d/data.json: \"ids\" is 'u8', expected 'u16' or 'u32'");
  EXPECT_EQ(error([](auto& j) { j["shards"][0]["file"] = "../x"; }),
            "d/data.json: \"shards[0].file\" is '../x', not a shard file name");
  EXPECT_EQ(error([](auto& j) { j["train"]["pieces"][0]["tokens"] = 5; }),
            "d/data.json: \"train.pieces[0]\" is not a non-empty range inside its shard of 4 tokens");
  EXPECT_EQ(error([](auto& j) { j["counts"]["tokens"] = 9; }),
            "d/data.json: \"counts.tokens\" is 9 but the splits hold 4");
  EXPECT_NE(error([](auto& j) { j["version"] = 99; }).find("format version 99"), std::string::npos);
  EXPECT_NE(error([](auto& j) { j["format"] = "x"; }).find("not a potop data description"), std::string::npos);
  EXPECT_EQ(error([](auto& j) { j["shards"][0]["checksum"] = "md5:1"; }),
            "d/data.json: \"shards[0].checksum\" is not \"xxh64:\" and 16 hex digits");
}

TEST(DataFormat, IdWidthFollowsTheVocabulary) {
  EXPECT_EQ(id_type_for(1), IdType::kU16);
  EXPECT_EQ(id_type_for(65536), IdType::kU16);  // ids 0..65535
  EXPECT_EQ(id_type_for(65537), IdType::kU32);
  EXPECT_EQ(id_bytes(IdType::kU16), 2);
  EXPECT_EQ(id_bytes(IdType::kU32), 4);
}

TEST(DataFormat, DocumentSplitSpreadsValidation) {
  int n = 0;
  for (uint64_t i = 0; i < 100; ++i) n += document_in_val(i, 0.1);
  EXPECT_EQ(n, 10);
  EXPECT_TRUE(document_in_val(9, 0.1));  // every 10th: 9, 19, ...
  EXPECT_FALSE(document_in_val(0, 0.1));
  for (uint64_t i = 0; i < 10; ++i) EXPECT_FALSE(document_in_val(i, 0.0));
}

// Shards written with both widths read back the same ids, little-endian, at the sizes promised.
TEST(ShardWriter, WritesLittleEndianU16AndU32) {
  const TempDir dir("shard_writer");
  std::vector<int> ids(1000);
  std::iota(ids.begin(), ids.end(), 60000);  // crosses 65535: needs u32
  for (IdType t : {IdType::kU16, IdType::kU32}) {
    const int vocab = t == IdType::kU16 ? 65536 : 70000;
    std::vector<int> v = ids;
    if (t == IdType::kU16)
      for (int& x : v) x %= 65536;
    ShardWriter w(dir, to_string(t), t, vocab, 300);
    w.write(std::span<const int>(v).first(10));
    w.write(std::span<const int>(v).subspan(10));
    const std::vector<ShardInfo> shards = w.finish();
    ASSERT_EQ(shards.size(), 4u);  // 300 + 300 + 300 + 100
    EXPECT_EQ(shards[3].tokens, 100u);
    std::vector<int> back;
    for (const ShardInfo& s : shards) {
      const std::string bytes = read_file(dir / s.file);
      ASSERT_EQ(bytes.size(), s.tokens * static_cast<uint64_t>(id_bytes(t)));
      EXPECT_EQ(s.checksum, xxh64(bytes.data(), bytes.size()));
      const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
      for (size_t i = 0; i < s.tokens; ++i) {
        uint32_t x = 0;
        for (int k = id_bytes(t) - 1; k >= 0; --k) x = x << 8 | p[i * static_cast<size_t>(id_bytes(t)) + k];
        back.push_back(static_cast<int>(x));
      }
    }
    EXPECT_EQ(back, v) << to_string(t);
  }
}

TEST(CorpusFiles, ChunksEndAtLineBoundaries) {
  const TempDir dir("chunks");
  const std::string text = "\xEF\xBB\xBF" + make_text(500);
  write_file(dir / "a.txt", text);
  const CorpusListing l = list_corpus(dir / "a.txt");
  ChunkReader r(l.files[0], 0, 256);
  TextChunk c;
  std::string joined;
  uint64_t offset = 3;
  while (r.next(c)) {
    EXPECT_EQ(c.offset, offset);
    EXPECT_LE(c.text.size(), 256u);
    if (joined.size() + c.text.size() < text.size() - 3) {
      EXPECT_EQ(c.text.back(), '\n');
    }
    joined += c.text;
    offset += c.text.size();
  }
  EXPECT_EQ(joined, text.substr(3));  // the byte-order mark is dropped, nothing else
  // A line longer than a chunk is cut before a space, or before a whole character.
  EXPECT_EQ(chunk_cut("abc def"), 3u);
  EXPECT_EQ(chunk_cut("ab\ncd ef"), 3u);
  EXPECT_EQ(chunk_cut("abcż"), 3u);
}

// The heart of the parallel prepare: ids identical to one serial encode of the whole text, for
// every thread count and chunk size, with the tail split of split_tokens.
TEST(Prepare, ParallelEncodeEqualsSerial) {
  const TempDir dir("prepare_parallel");
  const std::string text = make_text(3000);
  write_file(dir / "corpus.txt", text);
  const CharTokenizer tok = CharTokenizer::from_text(utf8_decode(text, "t"));
  const std::vector<int> serial = tok.encode(text);
  const TokenSplit split = split_tokens(serial, 0.1, 8, "t");
  const int threads_before = get_threads();
  for (int threads : {1, 2, 4}) {
    for (size_t chunk : {size_t{64}, size_t{1000}, size_t{1} << 20}) {
      apply_threads_flag(threads);
      PrepareOptions o = options_for(dir / "corpus.txt", dir / "out");
      o.chunk_bytes = chunk;
      o.shard_tokens = 5000;  // several shards, one of them across the split
      o.force = true;
      const PrepareResult r = prepare_data(o, &tok);
      EXPECT_EQ(r.manifest.tokens, serial.size());
      const PreparedData d = PreparedData::open(dir / "out");
      EXPECT_EQ(read_all(d, DataSplit::kTrain), split.train) << threads << " threads, chunks of " << chunk;
      EXPECT_EQ(read_all(d, DataSplit::kVal), split.val) << threads << " threads, chunks of " << chunk;
    }
  }
  apply_threads_flag(threads_before);
}

// The same for every kind of tokenizer: chunks end at line ends, so a parallel encode equals a
// serial one only if no kind's token spans a newline, and encode must be safe to call from
// several threads at once (SentencePiece's word cache is shared).
TEST(Prepare, ParallelEncodeEqualsSerialForEveryKind) {
  const TempDir dir("prepare_parallel_kinds");
  const std::string text = testing::multilingual_text(200000) + "\n\n  indented line\n\n\nlast";
  write_file(dir / "corpus.txt", text);
  const int threads_before = get_threads();
  for (const TokenizerKind kind : {TokenizerKind::kByte, TokenizerKind::kWord, TokenizerKind::kBpe, TokenizerKind::kUnigram}) {
    TokenizerTrainOptions train;
    train.kind = kind;
    if (kind == TokenizerKind::kBpe || kind == TokenizerKind::kUnigram) train.vocab_size = 1000;
    const std::unique_ptr<Tokenizer> tok = train_tokenizer(text, "corpus.txt", train);
    const std::vector<int> serial = tok->encode(text);
    apply_threads_flag(2);
    PrepareOptions o = options_for(dir / "corpus.txt", dir / "out");
    o.chunk_bytes = 4096;  // many chunks per thread
    o.force = true;
    prepare_data(o, tok.get());
    const PreparedData d = PreparedData::open(dir / "out");
    std::vector<int> all = read_all(d, DataSplit::kTrain);
    const std::vector<int> val = read_all(d, DataSplit::kVal);
    all.insert(all.end(), val.begin(), val.end());
    EXPECT_EQ(all, serial) << tok->kind();
  }
  apply_threads_flag(threads_before);
}

// Without a tokenizer, prepare builds the char tokenizer potop train builds from the text, and
// copies it into the data directory.
TEST(Prepare, BuildsTheCharTokenizerOfTheText) {
  const TempDir dir("prepare_char");
  const std::string text = make_text(400) + "Жили-были 😀\n";
  write_file(dir / "corpus.txt", text);
  const PrepareResult r = prepare_data(options_for(dir / "corpus.txt", dir / "out"), nullptr);
  const CharTokenizer expected = CharTokenizer::from_text(utf8_decode(text, "t"));
  EXPECT_EQ(r.manifest.tokenizer_hash, expected.hash());
  const auto copy = load_tokenizer_dir(dir / "out" / kTokenizerDir);
  EXPECT_EQ(copy->hash(), expected.hash());
  const PreparedData d = PreparedData::open(dir / "out");
  std::vector<int> all = read_all(d, DataSplit::kTrain), val = read_all(d, DataSplit::kVal);
  all.insert(all.end(), val.begin(), val.end());
  EXPECT_EQ(all, expected.encode(text));
  EXPECT_EQ(d.manifest().ids, IdType::kU16);
}

TEST(Prepare, DocumentSplitKeepsFilesWhole) {
  const TempDir dir("prepare_docs");
  fs::create_directories(dir / "corpus" / "sub");
  std::vector<std::string> texts;
  for (int i = 0; i < 10; ++i) {
    texts.push_back(make_text(20, static_cast<uint32_t>(i)));
    write_file(dir / "corpus" / (i < 5 ? "" : "sub") / ("doc" + std::to_string(i)), texts.back());
  }
  write_file(dir / "corpus" / ".hidden", "ignored");
  write_file(dir / "corpus" / "empty", "");
  const CharTokenizer tok = CharTokenizer::from_text(utf8_decode(texts[0] + texts[9] + "ąćęłńóśźżĄĆĘŁŃÓŚŹŻ", "t"));
  PrepareOptions o = options_for(dir / "corpus", dir / "out");
  o.split = SplitBy::kDocuments;
  o.val_fraction = 0.2;
  o.unknown = Unknown::kSkip;
  const PrepareResult r = prepare_data(o, &tok);
  EXPECT_EQ(r.manifest.documents, 10u);
  EXPECT_EQ(r.skipped_hidden, 1u);
  EXPECT_EQ(r.skipped_empty, 1u);
  // Sorted relative paths: doc0..doc4, then sub/doc5..sub/doc9; every 5th (indexes 4, 9) is val.
  std::vector<int> train, val;
  for (int i = 0; i < 10; ++i) {
    const std::vector<int> ids = tok.encode(texts[static_cast<size_t>(i)], "t", Unknown::kSkip, nullptr);
    (i == 4 || i == 9 ? val : train).insert((i == 4 || i == 9 ? val : train).end(), ids.begin(), ids.end());
  }
  const PreparedData d = PreparedData::open(dir / "out");
  EXPECT_EQ(read_all(d, DataSplit::kTrain), train);
  EXPECT_EQ(read_all(d, DataSplit::kVal), val);
  EXPECT_EQ(d.manifest().val.documents, 2u);
}

// Both back ends of TokenCorpus give the same training batches and evaluation batches for the
// same ids and seed, with windows small enough that reads cross window and shard boundaries.
TEST(TokenCorpus, PreparedAndInMemoryGiveIdenticalBatches) {
  const TempDir dir("token_corpus");
  const std::string text = make_text(2000);
  write_file(dir / "corpus.txt", text);
  const CharTokenizer tok = CharTokenizer::from_text(utf8_decode(text, "t"));
  PrepareOptions o = options_for(dir / "corpus.txt", dir / "out");
  o.shard_tokens = 3001;
  prepare_data(o, &tok);
  PreparedData::Options mapping;
  mapping.window_bytes = 1;  // one page
  mapping.max_windows = 2;
  const TokenCorpus prepared = TokenCorpus::prepared(PreparedData::open(dir / "out", mapping));
  const TokenCorpus memory = TokenCorpus::in_memory(split_tokens(tok.encode(text), 0.1, 32, "t"));
  ASSERT_EQ(prepared.train().size(), memory.train().size());
  ASSERT_EQ(prepared.val().size(), memory.val().size());
  const int B = 4, T = 32;
  for (auto [a, b] : {std::pair{prepared.train(), memory.train()}, std::pair{prepared.val(), memory.val()}}) {
    BatchSampler sa(a, B, T, 99), sb(b, B, T, 99);
    std::vector<int> xa(B * T), ya(B * T), xb(B * T), yb(B * T);
    for (int i = 0; i < 200; ++i) {
      sa.next(xa.data(), ya.data());
      sb.next(xb.data(), yb.data());
      ASSERT_EQ(xa, xb);
      ASSERT_EQ(ya, yb);
    }
    EXPECT_TRUE(sa.state() == sb.state());
    const std::vector<EvalWindow> windows = eval_windows(a.size(), T, 20);
    for (size_t first = 0; first < windows.size(); first += B) {
      const int na = fill_eval_batch(xa.data(), ya.data(), a, windows, first, B, T);
      const int nb = fill_eval_batch(xb.data(), yb.data(), b, windows, first, B, T);
      ASSERT_EQ(na, nb);
      ASSERT_EQ(xa, xb);
      ASSERT_EQ(ya, yb);
    }
  }
  EXPECT_LE(prepared.prepared_data()->peak_mapped_bytes(), 2 * 4096u * 16);  // pages of at most 64 KiB
}

TEST(PreparedData, RefusesCorruptAndTruncatedShards) {
  const TempDir dir("prepared_bad");
  write_file(dir / "corpus.txt", make_text(200));
  prepare_data(options_for(dir / "corpus.txt", dir / "out"), nullptr);
  const fs::path shard = dir / "out" / "tokens-00000.bin";
  std::string bytes = read_file(shard);
  // A flipped byte: the checksum catches it.
  std::string flipped = bytes;
  flipped[10] = static_cast<char>(flipped[10] ^ 1);
  write_file(shard, flipped);
  EXPECT_NE(error_message([&] { PreparedData::open(dir / "out"); }).find("tokens-00000.bin: corrupted"),
            std::string::npos);
  // Cut short: the size check names it.
  write_file(shard, bytes.substr(0, bytes.size() - 2));
  EXPECT_NE(error_message([&] { PreparedData::open(dir / "out"); }).find("tokens-00000.bin: truncated"),
            std::string::npos);
  fs::remove(shard);
  EXPECT_NE(error_message([&] { PreparedData::open(dir / "out"); }).find("shard missing"), std::string::npos);
  write_file(dir / "out" / kDataFile, "{\"format\":");
  EXPECT_NE(error_message([&] { PreparedData::open(dir / "out"); }).find("data.json: not valid JSON"),
            std::string::npos);
  fs::remove(dir / "out" / kDataFile);
  EXPECT_NE(error_message([&] { PreparedData::open(dir / "out"); }).find("not a prepared data directory"),
            std::string::npos);
}

TEST(Prepare, BadInputsNameTheFileAndLeaveOutAlone) {
  const TempDir dir("prepare_inputs");
  write_file(dir / "bad.txt", make_text(100) + "ok\n\xC3(\n");
  const std::string text = make_text(100);
  const std::string msg = error_message([&] { prepare_data(options_for(dir / "bad.txt", dir / "out"), nullptr); });
  EXPECT_NE(msg.find("bad.txt: invalid UTF-8 at byte offset " + std::to_string(text.size() + 3) + " (line 102)"),
            std::string::npos)
      << msg;
  EXPECT_FALSE(fs::exists(dir / "out"));
  fs::create_directories(dir / "empty_dir");
  EXPECT_NE(error_message([&] { prepare_data(options_for(dir / "empty_dir", dir / "out"), nullptr); })
                .find("no text files in this directory"),
            std::string::npos);
  write_file(dir / "empty.txt", "");
  EXPECT_NE(error_message([&] { prepare_data(options_for(dir / "empty.txt", dir / "out"), nullptr); })
                .find("empty.txt: file is empty"),
            std::string::npos);
  // An --out that holds something: refused without --force, and left as it was.
  fs::create_directories(dir / "taken");
  write_file(dir / "taken" / "keep", "x");
  write_file(dir / "good.txt", text);
  EXPECT_NE(error_message([&] { prepare_data(options_for(dir / "good.txt", dir / "taken"), nullptr); })
                .find("already exists; pass --force"),
            std::string::npos);
  EXPECT_EQ(read_file(dir / "taken" / "keep"), "x");
}

}  // namespace
}  // namespace potop
