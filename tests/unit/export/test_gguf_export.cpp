// The GGUF writer read back by a small independent reader (the format of llama.cpp's
// ggml/src/gguf.cpp), the byte-level alphabet, and a GPT's tensors and refusals. The real
// llama.cpp loads potop's files in tests/cli/gguf_export.sh.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "core/file_io.h"
#include "models/gpt/gpt_gguf.h"
#include "export/gguf_vocab.h"
#include "kernels/quant.h"
#include "tokenizer/char_tokenizer.h"

namespace potop {
namespace {

// What a GGUF file holds: its keys (scalars as numbers, strings and string arrays as text) and its
// tensors (dimensions, type, data).
struct ReadGguf {
  std::map<std::string, std::string> strings;
  std::map<std::string, double> numbers;
  std::map<std::string, std::vector<std::string>> string_arrays;
  std::map<std::string, size_t> array_sizes;
  struct Tensor {
    std::vector<uint64_t> ne;
    uint32_t type;
    uint64_t offset;
  };
  std::map<std::string, Tensor> tensors;
  size_t data_start = 0;
  std::string bytes;
};

class Reader {
 public:
  explicit Reader(const std::string& b) : b_(b) {}
  template <class T>
  T get() {
    T v;
    EXPECT_LE(at_ + sizeof(T), b_.size());
    std::memcpy(&v, b_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string str() {
    const auto n = get<uint64_t>();
    std::string s = b_.substr(at_, n);
    at_ += n;
    return s;
  }
  size_t at() const { return at_; }

 private:
  const std::string& b_;
  size_t at_ = 0;
};

ReadGguf read_gguf(const std::filesystem::path& path) {
  ReadGguf g;
  g.bytes = read_file(path);
  Reader r(g.bytes);
  EXPECT_EQ(g.bytes.substr(0, 4), "GGUF");
  r.get<uint32_t>();
  EXPECT_EQ(r.get<uint32_t>(), 3u);
  const auto n_tensors = r.get<uint64_t>(), n_kv = r.get<uint64_t>();
  for (uint64_t i = 0; i < n_kv; ++i) {
    const std::string key = r.str();
    const auto type = r.get<uint32_t>();
    switch (type) {
      case 4: g.numbers[key] = r.get<uint32_t>(); break;
      case 5: g.numbers[key] = r.get<int32_t>(); break;
      case 6: g.numbers[key] = r.get<float>(); break;
      case 7: g.numbers[key] = r.get<uint8_t>(); break;
      case 8: g.strings[key] = r.str(); break;
      case 9: {
        const auto item = r.get<uint32_t>();
        const auto n = r.get<uint64_t>();
        g.array_sizes[key] = n;
        for (uint64_t k = 0; k < n; ++k) {
          if (item == 8) g.string_arrays[key].push_back(r.str());
          else if (item == 5 || item == 6) r.get<uint32_t>();
          else ADD_FAILURE() << key << ": array of type " << item;
        }
        break;
      }
      default: ADD_FAILURE() << key << ": type " << type; return g;
    }
  }
  for (uint64_t i = 0; i < n_tensors; ++i) {
    const std::string name = r.str();
    ReadGguf::Tensor t;
    t.ne.resize(r.get<uint32_t>());
    for (auto& n : t.ne) n = r.get<uint64_t>();
    t.type = r.get<uint32_t>();
    t.offset = r.get<uint64_t>();
    EXPECT_EQ(t.offset % 32, 0u) << name;
    g.tensors[name] = t;
  }
  g.data_start = (r.at() + 31) / 32 * 32;
  return g;
}

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("potop-gguf-" + std::to_string(::getpid()) + "-" + name);
}

TEST(GgufWriter, ReadsBackKeysTensorsAndAlignedData) {
  GgufWriter w;
  w.add_string("general.architecture", "gpt2");
  w.add_u32("gpt2.block_count", 3);
  w.add_f32("gpt2.attention.layer_norm_epsilon", 1e-5f);
  w.add_bool("tokenizer.ggml.add_bos_token", false);
  w.add_strings("tokenizer.ggml.tokens", {"a", "Ġb", ""});
  const std::vector<float> v{1, 2, 3};  // 12 bytes: the next tensor starts 32 bytes on
  std::vector<uint8_t> bytes(12);
  std::memcpy(bytes.data(), v.data(), 12);
  w.add_tensor("x", {3}, GgmlType::kF32, bytes);
  w.add_tensor("y", {32, 2}, GgmlType::kQ8_0, std::vector<uint8_t>(68, 7));
  const auto path = temp_file("rt.gguf");
  w.write(path);
  const ReadGguf g = read_gguf(path);
  EXPECT_EQ(g.strings.at("general.architecture"), "gpt2");
  EXPECT_EQ(g.numbers.at("gpt2.block_count"), 3);
  EXPECT_FLOAT_EQ(static_cast<float>(g.numbers.at("gpt2.attention.layer_norm_epsilon")), 1e-5f);
  EXPECT_EQ(g.numbers.at("tokenizer.ggml.add_bos_token"), 0);
  EXPECT_EQ(g.string_arrays.at("tokenizer.ggml.tokens"), (std::vector<std::string>{"a", "Ġb", ""}));
  EXPECT_EQ(g.tensors.at("x").offset, 0u);
  EXPECT_EQ(g.tensors.at("y").offset, 32u);
  EXPECT_EQ(g.tensors.at("y").ne, (std::vector<uint64_t>{32, 2}));
  EXPECT_EQ(g.tensors.at("y").type, 8u);
  float back[3];
  std::memcpy(back, g.bytes.data() + g.data_start, 12);
  EXPECT_EQ(back[2], 3.0f);
  EXPECT_EQ(g.bytes.size(), g.data_start + 32 + 96);
  EXPECT_EQ(w.file_bytes(), g.bytes.size());
  std::filesystem::remove(path);
}

TEST(GgufWriter, FailedWriteLeavesNothing) {
  GgufWriter w;
  w.add_u32("k", 1);
  EXPECT_THROW(w.write("/nonexistent-dir/x.gguf"), Error);
}

TEST(GgufVocab, ByteLevelAlphabetIsGpt2s) {
  EXPECT_EQ(byte_level_char('a'), "a");
  EXPECT_EQ(byte_level_char(' '), "\u0120");   // Ġ
  EXPECT_EQ(byte_level_char('\n'), "\u010A");  // Ċ
  EXPECT_EQ(byte_level_char(0xAD), "\u0143");  // the 68th byte outside the printable ranges
  EXPECT_EQ(byte_level_char(0xC5), "\u00C5");
}

TEST(GgufVocab, CharVocabularyMergesRebuildEachCharacter) {
  GgufWriter w;
  std::vector<std::string> notes;
  add_gguf_vocab(w, CharTokenizer({U'\n', U' ', U'a', U'ł', U'—'}), notes);
  const auto path = temp_file("vocab.gguf");
  w.write(path);
  const ReadGguf g = read_gguf(path);
  EXPECT_EQ(g.strings.at("tokenizer.ggml.model"), "gpt2");
  // ł = C5 82, — = E2 80 94: one merge for ł, two for —.
  EXPECT_EQ(g.string_arrays.at("tokenizer.ggml.tokens"),
            (std::vector<std::string>{"\u010A", "\u0120", "a", "\u00C5\u0124", "\u00E2\u0122\u0136"}));
  EXPECT_EQ(g.string_arrays.at("tokenizer.ggml.merges"),
            (std::vector<std::string>{"\u00C5 \u0124", "\u00E2 \u0122", "\u00E2\u0122 \u0136"}));
  EXPECT_EQ(g.numbers.at("tokenizer.ggml.eos_token_id"), 0);  // the newline
  EXPECT_EQ(g.numbers.at("tokenizer.ggml.add_bos_token"), 0);
  std::filesystem::remove(path);
}

GPT tiny_gpt(int n_embd, NormPlacement norm = NormPlacement::kPre, Activation act = Activation::kGelu,
             bool bias = true) {
  GPTConfig c;
  c.vocab_size = 3, c.block_size = 8, c.n_layer = 2, c.n_head = 2, c.n_embd = n_embd;
  c.norm = norm, c.activation = act, c.bias = bias;
  GPT m(c);
  m.parameters().init(1);
  return m;
}

TEST(GgufGpt2, TensorsOfAGptAndTheirTypes) {
  const CharTokenizer tok({U'a', U'b', U'c'});
  std::vector<std::string> notes;
  const GPT m = tiny_gpt(32, NormPlacement::kPre, Activation::kGelu, /*bias=*/false);
  const GgufWriter w = gpt2_gguf(m, tok, GgmlType::kQ8_0, "tiny", notes);
  const auto path = temp_file("gpt.gguf");
  w.write(path);
  const ReadGguf g = read_gguf(path);
  EXPECT_EQ(g.tensors.size(), 4u + 12u * 2);
  EXPECT_EQ(g.tensors.at("token_embd.weight").type, 8u);
  EXPECT_EQ(g.tensors.at("token_embd.weight").ne, (std::vector<uint64_t>{32, 3}));
  EXPECT_EQ(g.tensors.at("position_embd.weight").type, 0u);
  EXPECT_EQ(g.tensors.at("blk.1.attn_qkv.weight").ne, (std::vector<uint64_t>{32, 96}));
  EXPECT_EQ(g.tensors.at("blk.1.ffn_down.weight").ne, (std::vector<uint64_t>{128, 32}));
  EXPECT_EQ(g.tensors.at("blk.0.attn_qkv.bias").ne, (std::vector<uint64_t>{96}));
  EXPECT_EQ(g.tensors.at("blk.0.attn_qkv.bias").type, 0u);
  EXPECT_EQ(g.numbers.at("gpt2.feed_forward_length"), 128);
  EXPECT_EQ(g.numbers.at("general.file_type"), 7);
  std::filesystem::remove(path);
}

TEST(GgufGpt2, QkvIsTransposedToOutputRows) {
  const CharTokenizer tok({U'a', U'b', U'c'});
  std::vector<std::string> notes;
  const GPT m = tiny_gpt(32);
  const GgufWriter w = gpt2_gguf(m, tok, GgmlType::kF32, "tiny", notes);
  const auto path = temp_file("qkv.gguf");
  w.write(path);
  const ReadGguf g = read_gguf(path);
  const auto& t = g.tensors.at("blk.0.attn_qkv.weight");
  const ParameterSet& p = m.parameters();
  const TensorSpec* spec = p.layout().find("h.0.attn.c_attn.weight");
  const float* W = p.values().at(*spec);  // (C, 3C): W[in][out]
  float got;
  const int in = 5, out = 70;  // row `out` of the GGUF tensor, column `in`
  std::memcpy(&got, g.bytes.data() + g.data_start + t.offset + (size_t(out) * 32 + in) * 4, 4);
  EXPECT_EQ(got, W[in * 96 + out]);
  std::filesystem::remove(path);
}

TEST(GgufGpt2, RowsThatAreNotWholeBlocksFallBackToF16) {
  const CharTokenizer tok({U'a', U'b', U'c'});
  std::vector<std::string> notes;
  const GgufWriter w = gpt2_gguf(tiny_gpt(48), tok, GgmlType::kQ8_0, "tiny", notes);
  bool said = false;
  for (const auto& n : notes) said = said || n.find("token_embd.weight") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(GgufGpt2, RefusesWhatGpt2CannotHold) {
  const CharTokenizer tok({U'a', U'b', U'c'});
  std::vector<std::string> notes;
  try {
    gpt2_gguf(tiny_gpt(32, NormPlacement::kPost), tok, GgmlType::kF32, "t", notes);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("norm"), std::string::npos) << e.what();
  }
  try {
    gpt2_gguf(tiny_gpt(32, NormPlacement::kPre, Activation::kRelu), tok, GgmlType::kF32, "t", notes);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("activation"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_gguf_weight_type("q3_k", "--type"), Error);
}

}  // namespace
}  // namespace potop
