// The GGUF writer read back by a small independent reader (the format of llama.cpp's
// ggml/src/gguf.cpp), the byte-level alphabet, a GPT's tensors and refusals, and a Llama's keys,
// tensors and rotary row order. The real llama.cpp loads potop's files in tests/cli/gguf_export.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "core/file_io.h"
#include "models/gpt/gpt_gguf.h"
#include "export/gguf_vocab.h"
#include "tokenizer/byte_level.h"
#include "kernels/quant.h"
#include "models/decoder/tensor_table.h"
#include "models/llama/llama_gguf.h"
#include "kernels/rope.h"
#include "support/testing.h"
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
  EXPECT_EQ(parse_gguf_weight_type("q4_0", "--type"), GgmlType::kQ4_0);
}

TEST(GgufGpt2, Q4_0Weights) {
  const CharTokenizer tok({U'a', U'b', U'c'});
  std::vector<std::string> notes;
  const auto path = temp_file("gpt-q4.gguf");
  gpt2_gguf(tiny_gpt(32), tok, GgmlType::kQ4_0, "tiny", notes).write(path);
  const ReadGguf g = read_gguf(path);
  EXPECT_EQ(g.tensors.at("blk.0.attn_qkv.weight").type, 2u);
  EXPECT_EQ(g.tensors.at("token_embd.weight").type, 2u);
  EXPECT_EQ(g.tensors.at("position_embd.weight").type, 0u);
  EXPECT_EQ(g.numbers.at("general.file_type"), 2);
  EXPECT_EQ(g.numbers.at("general.quantization_version"), 2);
  std::filesystem::remove(path);
}

// A Llama of 3 tokens: C = 32, H = 4 heads of D = 8 sharing Hkv = 2 K/V heads, F = 64.
Llama tiny_llama(bool tie = true, int n_kv_head = 2) {
  LlamaConfig c;
  c.vocab_size = 3, c.block_size = 8, c.n_layer = 2, c.n_head = 4, c.n_kv_head = n_kv_head, c.n_embd = 32;
  c.ffn_hidden = 64, c.rope_theta = 500000.0f, c.norm_eps = 1e-6f, c.tie_embeddings = tie;
  Llama m(c.resolved());
  m.parameters().init(3);
  return m;
}

const float* llama_param(const Llama& m, const std::string& name) {
  const ParameterSet& p = m.parameters();
  const TensorSpec* spec = p.layout().find(name);
  EXPECT_NE(spec, nullptr) << name;
  return p.values().at(*spec);
}

// Value (row, col) of an f32 matrix tensor of the file.
float gguf_f32(const ReadGguf& g, const std::string& name, uint64_t row, uint64_t col) {
  const auto& t = g.tensors.at(name);
  EXPECT_EQ(t.type, 0u) << name;
  float v;
  std::memcpy(&v, g.bytes.data() + g.data_start + t.offset + (row * t.ne[0] + col) * 4, 4);
  return v;
}

TEST(GgufLlama, KeysOfLlamaCppsLlama) {
  const CharTokenizer tok({U'a', U'b', U'c'});
  std::vector<std::string> notes;
  const auto path = temp_file("llama-keys.gguf");
  llama_gguf(tiny_llama(), tok, GgmlType::kF32, "tiny", notes).write(path);
  const ReadGguf g = read_gguf(path);
  EXPECT_EQ(g.strings.at("general.architecture"), "llama");
  EXPECT_EQ(g.strings.at("general.name"), "tiny");
  EXPECT_EQ(g.numbers.at("general.file_type"), 0);
  EXPECT_EQ(g.numbers.count("general.quantization_version"), 0u);
  EXPECT_EQ(g.numbers.at("llama.vocab_size"), 3);
  EXPECT_EQ(g.numbers.at("llama.context_length"), 8);
  EXPECT_EQ(g.numbers.at("llama.embedding_length"), 32);
  EXPECT_EQ(g.numbers.at("llama.block_count"), 2);
  EXPECT_EQ(g.numbers.at("llama.feed_forward_length"), 64);
  EXPECT_EQ(g.numbers.at("llama.attention.head_count"), 4);
  EXPECT_EQ(g.numbers.at("llama.attention.head_count_kv"), 2);
  EXPECT_EQ(g.numbers.at("llama.rope.dimension_count"), 8);
  EXPECT_EQ(static_cast<float>(g.numbers.at("llama.rope.freq_base")), 500000.0f);
  EXPECT_EQ(static_cast<float>(g.numbers.at("llama.attention.layer_norm_rms_epsilon")), 1e-6f);
  EXPECT_EQ(g.strings.at("tokenizer.ggml.model"), "gpt2");  // the GPT's vocabulary, for the same tokenizer
  EXPECT_EQ(g.string_arrays.at("tokenizer.ggml.tokens"), (std::vector<std::string>{"a", "b", "c"}));
  std::filesystem::remove(path);
}

TEST(GgufLlama, TensorNamesShapesAndTypes) {
  const CharTokenizer tok({U'a', U'b', U'c'});
  std::vector<std::string> notes;
  const auto path = temp_file("llama-tensors.gguf");
  llama_gguf(tiny_llama(/*tie=*/true), tok, GgmlType::kQ8_0, "tiny", notes).write(path);
  ReadGguf g = read_gguf(path);
  std::vector<std::string> names;
  for (const auto& [name, t] : g.tensors) names.push_back(name);
  std::vector<std::string> want{"output_norm.weight", "token_embd.weight"};  // tied: no output.weight
  for (int l = 0; l < 2; ++l)
    for (const char* t : {"attn_k", "attn_norm", "attn_output", "attn_q", "attn_v", "ffn_down", "ffn_gate", "ffn_norm",
                          "ffn_up"})
      want.push_back("blk." + std::to_string(l) + "." + t + ".weight");
  std::sort(want.begin(), want.end());
  EXPECT_EQ(names, want);
  using Ne = std::vector<uint64_t>;
  EXPECT_EQ(g.tensors.at("token_embd.weight").ne, (Ne{32, 3}));
  EXPECT_EQ(g.tensors.at("blk.1.attn_q.weight").ne, (Ne{32, 32}));
  EXPECT_EQ(g.tensors.at("blk.1.attn_k.weight").ne, (Ne{32, 16}));  // 2 K/V heads of 8
  EXPECT_EQ(g.tensors.at("blk.1.attn_v.weight").ne, (Ne{32, 16}));
  EXPECT_EQ(g.tensors.at("blk.1.attn_output.weight").ne, (Ne{32, 32}));
  EXPECT_EQ(g.tensors.at("blk.0.ffn_gate.weight").ne, (Ne{32, 64}));
  EXPECT_EQ(g.tensors.at("blk.0.ffn_up.weight").ne, (Ne{32, 64}));
  EXPECT_EQ(g.tensors.at("blk.0.ffn_down.weight").ne, (Ne{64, 32}));
  EXPECT_EQ(g.tensors.at("blk.0.ffn_norm.weight").ne, (Ne{32}));
  for (const auto& [name, t] : g.tensors) EXPECT_EQ(t.type, t.ne.size() == 1 ? 0u : 8u) << name;
  EXPECT_EQ(g.numbers.at("general.file_type"), 7);
  EXPECT_EQ(g.numbers.at("general.quantization_version"), 2);

  llama_gguf(tiny_llama(/*tie=*/false), tok, GgmlType::kQ4_0, "tiny", notes).write(path);
  g = read_gguf(path);
  EXPECT_EQ(g.tensors.at("output.weight").ne, (Ne{32, 3}));
  EXPECT_EQ(g.tensors.at("output.weight").type, 2u);
  EXPECT_EQ(g.tensors.at("blk.0.attn_q.weight").type, 2u);
  EXPECT_EQ(g.numbers.at("general.file_type"), 2);
  for (const auto& n : notes) EXPECT_EQ(n.find("blocks of 32"), std::string::npos) << n;  // 32 and 64: whole blocks
  std::filesystem::remove(path);
}

// Every value where llama.cpp reads it: Q and K rows interleaved per head, V, the MLP's gate and
// up split from gate_up_proj, the rest transposed to rows of inputs.
TEST(GgufLlama, ValuesSplitTransposedAndRotaryRowsInterleaved) {
  const CharTokenizer tok({U'a', U'b', U'c'});
  std::vector<std::string> notes;
  const Llama m = tiny_llama(/*tie=*/false);
  const auto path = temp_file("llama-values.gguf");
  llama_gguf(m, tok, GgmlType::kF32, "tiny", notes).write(path);
  const ReadGguf g = read_gguf(path);
  const int C = 32, H = 4, Hkv = 2, D = 8, F = 64, W = (H + 2 * Hkv) * D;
  const std::string p = "model.layers.1.";
  const float* qkv = llama_param(m, p + "self_attn.qkv_proj.weight");  // (C, W)
  const float* o = llama_param(m, p + "self_attn.o_proj.weight");      // (C, C)
  const float* gate_up = llama_param(m, p + "mlp.gate_up_proj.weight");  // (C, 2F)
  const float* down = llama_param(m, p + "mlp.down_proj.weight");        // (F, C)
  for (int in = 0; in < C; ++in) {
    for (int h = 0; h < H; ++h)
      for (int j = 0; j < 2; ++j)
        for (int i = 0; i < D / 2; ++i)  // Hugging Face's value i + j·D/2 of head h is llama.cpp's 2i + j
          ASSERT_EQ(gguf_f32(g, "blk.1.attn_q.weight", h * D + 2 * i + j, in), qkv[in * W + h * D + j * D / 2 + i]);
    for (int h = 0; h < Hkv; ++h)
      for (int j = 0; j < 2; ++j)
        for (int i = 0; i < D / 2; ++i)
          ASSERT_EQ(gguf_f32(g, "blk.1.attn_k.weight", h * D + 2 * i + j, in),
                    qkv[in * W + H * D + h * D + j * D / 2 + i]);
    for (int r = 0; r < Hkv * D; ++r)
      ASSERT_EQ(gguf_f32(g, "blk.1.attn_v.weight", r, in), qkv[in * W + (H + Hkv) * D + r]);
    for (int r = 0; r < C; ++r) ASSERT_EQ(gguf_f32(g, "blk.1.attn_output.weight", r, in), o[in * C + r]);
    for (int f = 0; f < F; ++f) {
      ASSERT_EQ(gguf_f32(g, "blk.1.ffn_gate.weight", f, in), gate_up[in * 2 * F + f]);
      ASSERT_EQ(gguf_f32(g, "blk.1.ffn_up.weight", f, in), gate_up[in * 2 * F + F + f]);
      ASSERT_EQ(gguf_f32(g, "blk.1.ffn_down.weight", in, f), down[f * C + in]);
    }
  }
  const float* embed = llama_param(m, "model.embed_tokens.weight");
  const float* head = llama_param(m, "lm_head.weight");
  for (int v = 0; v < 3; ++v)
    for (int c = 0; c < C; ++c) {
      ASSERT_EQ(gguf_f32(g, "token_embd.weight", v, c), embed[v * C + c]);
      ASSERT_EQ(gguf_f32(g, "output.weight", v, c), head[v * C + c]);
    }
  std::filesystem::remove(path);
}

TEST(GgufLlama, InterleaveRopeRowsIsConvertersPermute) {
  // convert_hf_to_gguf.py: w.reshape(heads, 2, D/2, in).swapaxes(1, 2).reshape(w.shape)
  const std::vector<float> w{0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17};  // 2 heads of D = 4, in = 2
  EXPECT_EQ(interleave_rope_rows(w, 2, 4, 2),
            (std::vector<float>{0, 1, 4, 5, 2, 3, 6, 7, 10, 11, 14, 15, 12, 13, 16, 17}));
}

// What the permutation is for: rotating adjacent pairs (llama.cpp's "normal" RoPE) of the
// interleaved projections gives the query-key products that rotate_half (potop, Hugging Face)
// gives of the original ones, at every pair of positions.
TEST(GgufLlama, InterleavedRowsUnderAdjacentPairRopeGiveTheSameScores) {
  const int D = 16;
  const float theta = 10000.0f;
  const std::vector<float> q = testing::random_vector(D, 1), k = testing::random_vector(D, 2);
  const std::vector<float> freq = rope_frequencies(D, theta);
  auto adjacent = [&](std::vector<float> x, int pos) {  // llama.cpp's ggml_rope, mode 0
    for (int i = 0; i < D / 2; ++i) {
      const float a = static_cast<float>(pos) * freq[i], c = std::cos(a), s = std::sin(a);
      const float x0 = x[2 * i], x1 = x[2 * i + 1];
      x[2 * i] = x0 * c - x1 * s, x[2 * i + 1] = x0 * s + x1 * c;
    }
    return x;
  };
  auto dot = [](const std::vector<float>& a, const std::vector<float>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += double{a[i]} * b[i];
    return s;
  };
  for (const auto& [pq, pk] : {std::pair{5, 2}, std::pair{7, 7}, std::pair{40, 3}}) {
    std::vector<float> rq = q, rk = k;  // rotate_half at positions pq, pk
    rope_forward(rq.data(), 1, D, 1, D, &pq, freq.data());
    rope_forward(rk.data(), 1, D, 1, D, &pk, freq.data());
    // A projection of one input value 1: its rows are the vector, so permuting rows permutes it.
    const double got =
        dot(adjacent(interleave_rope_rows(q, 1, D, 1), pq), adjacent(interleave_rope_rows(k, 1, D, 1), pk));
    EXPECT_NEAR(got, dot(rq, rk), 1e-4) << pq << " " << pk;
  }
}

TEST(GgufLlama, RefusesATokenizerThatDoesNotFit) {
  const CharTokenizer tok({U'a', U'b', U'c', U'd'});
  std::vector<std::string> notes;
  const std::string e = testing::error_message([&] { llama_gguf(tiny_llama(), tok, GgmlType::kF32, "t", notes); });
  EXPECT_NE(e.find("vocab_size"), std::string::npos) << e;
}

}  // namespace
}  // namespace potop
