// The GGUF reader (checkpoint/gguf_file.h) on files potop's writer makes and on hostile bytes, and
// potop import of GGUF files: a GPT and a Llama exported and imported back hold the same
// parameters, their q8_0 matrices kept as the file's rows. PyTorch checks GGUF files written in
// Python (tests/torch/check_hf_import.py); llama.cpp and a byte-for-byte re-export check potop's
// own (tests/cli/gguf_export.sh).
#include "checkpoint/gguf_file.h"

#include <gtest/gtest.h>

#include <cstring>

#include "checkpoint/gguf_import.h"
#include "checkpoint/model_dir.h"
#include "checkpoint/quantize_model.h"
#include "core/error.h"
#include "core/file_io.h"
#include "models/gpt/gpt_gguf.h"
#include "models/llama/llama_gguf.h"
#include "support/testing.h"
#include "tokenizer/char_tokenizer.h"

namespace potop {
namespace {

namespace fs = std::filesystem;

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_string(std::string& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out += s;
}

// A header of `n_tensors` and `n_kv` counts, then `rest` as it is.
std::string header(uint64_t n_tensors, uint64_t n_kv, const std::string& rest, uint32_t version = 3) {
  std::string b = "GGUF";
  put<uint32_t>(b, version);
  put<uint64_t>(b, n_tensors);
  put<uint64_t>(b, n_kv);
  return b + rest;
}

void expect_has(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

std::string error_reading(const testing::TempDir& dir, const std::string& bytes) {
  const fs::path path = dir / "bad.gguf";
  write_file_atomic(path, bytes);
  return testing::error_message([&] { GgufFile f(path); });
}

TEST(GgufFile, ReadsWhatTheWriterWrites) {
  const testing::TempDir dir("gguf_file");
  GgufWriter w;
  w.add_string("general.architecture", "gpt2");
  w.add_u32("gpt2.block_count", 3);
  w.add_i32("some.i32", -7);
  w.add_f32("gpt2.attention.layer_norm_epsilon", 1e-5f);
  w.add_bool("tokenizer.ggml.add_bos_token", false);
  w.add_strings("tokenizer.ggml.tokens", {"a", "Ġb", ""});
  w.add_f32s("tokenizer.ggml.scores", {0.5f, -1.0f, 2.0f});
  w.add_i32s("tokenizer.ggml.token_type", {1, 3, 6});
  const std::vector<float> x{1.5f, -2.0f, 3.25f};
  std::vector<uint8_t> xb(12);
  std::memcpy(xb.data(), x.data(), 12);
  w.add_tensor("x", {3}, GgmlType::kF32, xb);
  std::vector<float> rows(64);
  for (int i = 0; i < 64; ++i) rows[size_t(i)] = 0.1f * float(i - 30);
  std::vector<uint8_t> q(68);
  quantize_row(QuantType::kQ8_0, rows.data(), 32, q.data());
  quantize_row(QuantType::kQ8_0, rows.data() + 32, 32, q.data() + 34);
  w.add_tensor("y", {32, 2}, GgmlType::kQ8_0, q);
  w.write(dir / "a.gguf");

  const GgufFile f(dir / "a.gguf");
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.string("general.architecture"), "gpt2");
  EXPECT_EQ(f.metadata()["gpt2.block_count"], 3);
  EXPECT_EQ(f.metadata()["some.i32"], -7);
  EXPECT_EQ(f.metadata()["gpt2.attention.layer_norm_epsilon"].get<float>(), 1e-5f);
  EXPECT_EQ(f.metadata()["tokenizer.ggml.add_bos_token"], false);
  EXPECT_EQ(f.metadata()["tokenizer.ggml.tokens"], (nlohmann::json{"a", "Ġb", ""}));
  EXPECT_EQ(f.metadata()["tokenizer.ggml.scores"], (nlohmann::json{0.5, -1.0, 2.0}));
  EXPECT_EQ(f.metadata()["tokenizer.ggml.token_type"], (nlohmann::json{1, 3, 6}));
  ASSERT_EQ(f.tensors().size(), 2u);
  const GgufTensorInfo* y = f.find("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->ne, (std::vector<int64_t>{32, 2}));
  EXPECT_EQ(y->type, GgmlType::kQ8_0);
  EXPECT_EQ(y->bytes, 68u);
  EXPECT_EQ(std::memcmp(f.data(*y), q.data(), 68), 0);
  std::vector<float> back(64), want(64);
  f.read_floats(*y, back.data());
  dequantize_row(QuantType::kQ8_0, q.data(), 32, want.data());
  dequantize_row(QuantType::kQ8_0, q.data() + 34, 32, want.data() + 32);
  EXPECT_EQ(back, want);
  std::vector<float> xs(3);
  f.read_floats(*f.find("x"), xs.data());
  EXPECT_EQ(xs, x);
  expect_has(testing::error_message([&] { f.string("general.name"); }), "general.name is missing");
}

TEST(GgufFile, RefusesHostileBytesWithOneLine) {
  const testing::TempDir dir("gguf_hostile");
  expect_has(error_reading(dir, "GGML and more bytes"), "not a GGUF file");
  expect_has(error_reading(dir, header(0, 0, "", 4)), "GGUF version 4");
  // Counts that the bytes cannot hold are refused before anything is allocated for them.
  expect_has(error_reading(dir, header(0, uint64_t{1} << 60, "")), "more than the file holds");
  std::string kv;
  put_string(kv, "k");
  put<uint32_t>(kv, 9);  // an array
  put<uint32_t>(kv, 8);  // of strings
  put<uint64_t>(kv, uint64_t{1} << 50);
  expect_has(error_reading(dir, header(0, 1, kv + std::string(16, '\0'))), "k counts more items");
  std::string nested;
  put_string(nested, "k");
  put<uint32_t>(nested, 9);
  put<uint32_t>(nested, 9);
  put<uint64_t>(nested, 1);
  expect_has(error_reading(dir, header(0, 1, nested + std::string(16, '\0'))), "array of arrays");
  std::string string_past_end;
  put_string(string_past_end, "k");
  put<uint32_t>(string_past_end, 8);
  put<uint64_t>(string_past_end, 1000);
  expect_has(error_reading(dir, header(0, 1, string_past_end + "abc" + std::string(16, '\0'))),
              ("ends inside a string value"));
  std::string twice;
  for (int i = 0; i < 2; ++i) put_string(twice, "k"), put<uint32_t>(twice, 4), put<uint32_t>(twice, 1);
  expect_has(error_reading(dir, header(0, 2, twice)), "k appears twice");
  std::string align;
  put_string(align, "general.alignment");
  put<uint32_t>(align, 4);
  put<uint32_t>(align, 24);
  expect_has(error_reading(dir, header(0, 1, align)), "not a power of two");
  // A tensor whose data would run past the end, one with a dimension of zero, one of 5 dimensions.
  const auto tensor = [](const std::vector<uint64_t>& ne, uint32_t type, uint64_t offset, const char* name = "w") {
    std::string t;
    put_string(t, name);
    put<uint32_t>(t, static_cast<uint32_t>(ne.size()));
    for (uint64_t n : ne) put<uint64_t>(t, n);
    put<uint32_t>(t, type);
    put<uint64_t>(t, offset);
    return t;
  };
  expect_has(error_reading(dir, header(1, 0, tensor({32, 1000}, 0, 0)) + std::string(64, '\0')),
              ("w's data runs past the end"));
  expect_has(error_reading(dir, header(1, 0, tensor({32, 0}, 0, 0))), "a dimension of 0");
  expect_has(error_reading(dir, header(1, 0, tensor({1, 1, 1, 1, 1}, 0, 0))), "5 dimensions");
  expect_has(error_reading(dir, header(1, 0, tensor({30, 1}, 8, 0)) + std::string(64, '\0')),
              ("not whole blocks of 32"));
  expect_has(error_reading(dir, header(1, 0, tensor({32}, 0, 7)) + std::string(256, '\0')),
              ("not aligned to 32"));
  // b starts inside a's 256 bytes (llama.cpp refuses it too); side by side they are read.
  expect_has(error_reading(dir, header(2, 0, tensor({32, 2}, 0, 0, "a") + tensor({32}, 0, 128, "b")) +
                                    std::string(512, '\0')),
             ("tensors a and b overlap in the data section"));
  const fs::path side_by_side = dir / "side_by_side.gguf";
  write_file_atomic(side_by_side, header(2, 0, tensor({32, 2}, 0, 0, "a") + tensor({32}, 0, 256, "b")) + std::string(512, '\0'));
  EXPECT_EQ(GgufFile(side_by_side).tensors().size(), 2u);
  // A type potop does not read is listed by its ggml name, and refused when it is read.
  const fs::path path = dir / "q4k.gguf";
  write_file_atomic(path, header(1, 0, tensor({256}, 12, 0)) + std::string(64, '\0'));
  const GgufFile f(path);
  std::vector<float> out(256);
  expect_has(testing::error_message([&] { f.read_floats(f.tensors()[0], out.data()); }),
              ("w is q4_K"));
}

TEST(GgufImport, ASentencePieceVocabularyTooShortForItsSpecialIdsIsRefused) {
  // Without tokenizer.ggml.*_token_id keys the ids default to SentencePiece's (<unk> 0, <s> 1,
  // </s> 2): a one-token vocabulary has none of them past its first, and is refused, not read past.
  const testing::TempDir dir("gguf_short_vocab");
  GgufWriter w;
  w.add_string("tokenizer.ggml.model", "llama");
  w.add_strings("tokenizer.ggml.tokens", {"a"});
  w.write(dir / "v.gguf");
  const GgufFile f(dir / "v.gguf");
  std::string from;
  const std::string e = testing::error_message([&] { read_gguf_tokenizer(f, from); });
  expect_has(e, (dir / "v.gguf").string());
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

// Every parameter of b as a's: float values bit for bit, quantized matrices byte for byte.
void expect_same_parameters(const ParameterSet& a, const ParameterSet& b) {
  ASSERT_EQ(a.layout().specs().size(), b.layout().specs().size());
  for (size_t i = 0; i < a.layout().specs().size(); ++i) {
    const auto id = static_cast<ParamId>(i);
    const std::string& name = a.layout().specs()[i].name;
    ASSERT_EQ(name, b.layout().specs()[i].name);
    const QuantizedMatrix *qa = a.quantized(id), *qb = b.quantized(id);
    ASSERT_EQ(qa == nullptr, qb == nullptr) << name;
    if (qa) EXPECT_EQ(qa->rows_data(), qb->rows_data()) << name;
    else EXPECT_TRUE(testing::bitwise_equal(a.dense_values(id), b.dense_values(id))) << name;
  }
}

TEST(GgufImport, ExportedGptAndLlamaComeBackTheSame) {
  const testing::TempDir dir("gguf_import");
  const CharTokenizer tok({U'a', U'b', U'ł', U'—', U' '});
  GPTConfig gc;
  gc.vocab_size = tok.size(), gc.block_size = 8, gc.n_layer = 2, gc.n_head = 2, gc.n_embd = 32;
  GPT gpt(gc);
  gpt.parameters().init(1);
  LlamaConfig lc;
  lc.vocab_size = tok.size(), lc.block_size = 8, lc.n_layer = 2, lc.n_head = 4, lc.n_kv_head = 2, lc.n_embd = 32;
  lc.ffn_hidden = 64, lc.rope_theta = 500000.0f, lc.norm_eps = 1e-6f, lc.tie_embeddings = false;
  Llama llama(lc.resolved());
  llama.parameters().init(3);
  std::vector<std::string> notes;
  gpt2_gguf(gpt, tok, GgmlType::kF32, "g", notes).write(dir / "gpt.gguf");
  llama_gguf(llama, tok, GgmlType::kF32, "l", notes).write(dir / "llama.gguf");
  for (const char* name : {"gpt", "llama"}) {
    const ImportSummary s = import_gguf_file(dir / (std::string(name) + ".gguf"), dir / name);
    EXPECT_EQ(s.tokenizer.substr(0, 14), "char, 5 tokens");
    const LoadedModel m = load_model_dir(dir / name);
    EXPECT_EQ(m.tokenizer->hash(), tok.hash());
    expect_same_parameters(std::string(name) == "gpt" ? gpt.parameters() : llama.parameters(), m.model->parameters());
  }
  // q8_0: the matrices keep the file's rows; the embedding, quantized in the file, is float32 now.
  quantize_matrices(llama.parameters(), QuantType::kQ8_0);
  llama_gguf(llama, tok, GgmlType::kQ8_0, "l", notes).write(dir / "llama-q8_0.gguf");
  const ImportSummary s = import_gguf_file(dir / "llama-q8_0.gguf", dir / "llama-q8_0");
  ASSERT_EQ(s.notes.size(), 1u);
  expect_has(s.notes[0], "token_embd.weight (q8_0)");
  const LoadedModel m = load_model_dir(dir / "llama-q8_0");
  EXPECT_EQ(m.files["quantized"], "q8_0");
  const ParameterSet &want = llama.parameters(), &got = m.model->parameters();
  int kept = 0;
  for (size_t i = 0; i < want.layout().specs().size(); ++i)
    if (const QuantizedMatrix* q = want.quantized(static_cast<ParamId>(i))) {
      const QuantizedMatrix* g = got.quantized(static_cast<ParamId>(i));
      ASSERT_NE(g, nullptr) << want.layout().specs()[i].name;
      EXPECT_EQ(q->rows_data(), g->rows_data()) << want.layout().specs()[i].name;
      ++kept;
    }
  EXPECT_EQ(kept, 4 * lc.n_layer);  // per layer qkv, o, gate_up and down, as potop quantize made them
  // Nothing is written over an existing directory.
  expect_has(testing::error_message([&] { import_gguf_file(dir / "gpt.gguf", dir / "gpt"); }),
              ("exists"));
}

}  // namespace
}  // namespace potop
