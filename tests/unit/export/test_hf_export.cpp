// export_hf: a potop GPT as a Hugging Face GPT-2 directory, a Llama as a LlamaForCausalLM one.
// These tests read the directory back with potop's own reader (names, shapes, values, config.json,
// tokenizer files); the PyTorch check (tests/torch/check_hf_export.py, ctest cli.hf_export_torch)
// runs GPT-2's and Llama's forward passes on what HfExport.WritesTorchCheckFixtures writes and
// compares their logits and token ids with potop's.
#include "models/gpt/gpt_hf_export.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "core/safetensors.h"
#include "kernels/embedding.h"
#include "models/llama/llama_hf_export.h"
#include "models/llama/llama_kind.h"
#include "support/multilingual.h"
#include "support/testing.h"
#include "support/torch_oracle.h"
#include "tokenizer/byte_tokenizer.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"

namespace potop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The sentence the PyTorch check tokenizes and scores: every Polish diacritic.
constexpr const char* kSentence = "Zażółć gęślą jaźń, pchnąć w tę łódź jeża!";

// A GPT with random weights spread (testing::spread_init) so that every tensor matters: biases and
// LayerNorm gains are not 0 and 1.
LoadedGpt make_model(GPTConfig config, std::unique_ptr<Tokenizer> tokenizer, uint64_t seed = 1) {
  LoadedGpt m;
  config.vocab_size = tokenizer->size();
  m.config = config;
  m.model = std::make_unique<GPT>(config);
  m.model->init_weights(seed);
  testing::spread_init(m.model->parameters(), seed);
  m.tokenizer = std::move(tokenizer);
  return m;
}

GPTConfig small_config() {
  GPTConfig c;
  c.block_size = 64, c.n_layer = 2, c.n_head = 2, c.n_embd = 16;
  return c;
}

std::unique_ptr<Tokenizer> char_tokenizer() {
  return std::make_unique<CharTokenizer>(CharTokenizer::from_text(U"Zażółć gęślą jaźń, pchnąć w tę łódź jeża!\n"
                                                                  U"ZAŻÓŁĆ GĘŚLĄ JAŹŃ. Kmicic 123"));
}

// The tensors a GPT2LMHeadModel's state dict holds (lm_head.weight is tied to wte).
std::vector<std::string> gpt2_names(int n_layer) {
  std::vector<std::string> names = {"transformer.wte.weight", "transformer.wpe.weight"};
  for (int l = 0; l < n_layer; ++l) {
    const std::string h = "transformer.h." + std::to_string(l) + ".";
    for (const char* t : {"ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
                          "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
                          "mlp.c_proj.weight", "mlp.c_proj.bias"})
      names.push_back(h + t);
  }
  names.push_back("transformer.ln_f.weight");
  names.push_back("transformer.ln_f.bias");
  return names;
}

std::vector<float> potop_values(const LoadedGpt& m, const std::string& name) {
  const ParameterSet& p = m.model->parameters();
  const TensorSpec* spec = p.layout().find(name);
  EXPECT_NE(spec, nullptr) << name;
  if (!spec) return {};
  const float* v = p.values().at(*spec);
  return {v, v + spec->numel};
}

// Nothing but out_dir itself beside it: no temporary sibling left.
std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(HfExport, WritesGpt2NamesShapesAndValues) {
  const testing::TempDir dir("hf_export_names");
  const LoadedGpt m = make_model(small_config(), char_tokenizer());
  export_hf(m, dir / "hf");
  EXPECT_EQ(entries(dir), std::vector<std::string>{"hf"});
  EXPECT_EQ(entries(dir / "hf"), (std::vector<std::string>{"config.json", "generation_config.json", "model.safetensors",
                                                           "tokenizer.json", "tokenizer_config.json"}));

  const SafetensorsFile f(dir / "hf" / "model.safetensors");
  EXPECT_EQ(f.names(), gpt2_names(2));
  EXPECT_EQ(f.metadata_value("format"), "pt");
  const int64_t C = 16, V = m.config.vocab_size;
  EXPECT_EQ(f.info("transformer.wte.weight").shape, (Shape{V, C}));
  EXPECT_EQ(f.info("transformer.wpe.weight").shape, (Shape{64, C}));
  EXPECT_EQ(f.info("transformer.h.1.attn.c_attn.weight").shape, (Shape{C, 3 * C}));  // Conv1D: (in, out)
  EXPECT_EQ(f.info("transformer.h.1.attn.c_proj.weight").shape, (Shape{C, C}));
  EXPECT_EQ(f.info("transformer.h.0.mlp.c_fc.weight").shape, (Shape{C, 4 * C}));
  EXPECT_EQ(f.info("transformer.h.0.mlp.c_proj.weight").shape, (Shape{4 * C, C}));
  EXPECT_EQ(f.info("transformer.h.0.mlp.c_fc.bias").shape, (Shape{4 * C}));
  EXPECT_EQ(f.info("transformer.ln_f.bias").shape, (Shape{C}));
  for (const std::string& name : f.names()) {  // every value, bit for bit
    const std::vector<float> want = potop_values(m, name.substr(std::strlen("transformer.")));
    EXPECT_TRUE(testing::bitwise_equal(testing::f32_vector(f, name), want)) << name;
  }

  const json config = read_json_file(dir / "hf" / "config.json");
  EXPECT_EQ(config["model_type"], "gpt2");
  EXPECT_EQ(config["architectures"], json::array({"GPT2LMHeadModel"}));
  EXPECT_EQ(config["vocab_size"], V);
  EXPECT_EQ(config["n_positions"], 64);
  EXPECT_EQ(config["n_ctx"], 64);
  EXPECT_EQ(config["n_embd"], 16);
  EXPECT_EQ(config["n_layer"], 2);
  EXPECT_EQ(config["n_head"], 2);
  EXPECT_EQ(config["n_inner"], 64);
  EXPECT_EQ(config["activation_function"], "gelu_new");
  EXPECT_EQ(config["layer_norm_epsilon"].get<double>(), 1e-5);
  EXPECT_EQ(config["resid_pdrop"].get<double>(), 0.0);
  EXPECT_EQ(config["tie_word_embeddings"], true);
  EXPECT_TRUE(config["bos_token_id"].is_null());  // char has no special tokens
  EXPECT_TRUE(config["eos_token_id"].is_null());

  // char: a BPE without merges over the characters, ids potop's.
  const json tok = read_json_file(dir / "hf" / "tokenizer.json");
  EXPECT_EQ(tok["model"]["type"], "BPE");
  EXPECT_TRUE(tok["model"]["merges"].empty());
  EXPECT_EQ(tok["decoder"]["type"], "Fuse");
  const json& vocab = tok["model"]["vocab"];
  ASSERT_EQ(vocab.size(), static_cast<size_t>(V));
  const std::vector<int> ids = m.tokenizer->encode("żółć");
  EXPECT_EQ(vocab["ż"], ids[0]);
  EXPECT_EQ(vocab["ć"], ids[3]);
}

TEST(HfExport, SinusoidalPositionsAreTheTableAndMissingBiasesAreZero) {
  const testing::TempDir dir("hf_export_sinusoidal");
  GPTConfig c = small_config();
  c.positions = PositionEncoding::kSinusoidal, c.bias = false, c.dropout = 0.125f;
  const LoadedGpt m = make_model(c, char_tokenizer());
  export_hf(m, dir / "hf");
  const SafetensorsFile f(dir / "hf" / "model.safetensors");
  EXPECT_EQ(f.names(), gpt2_names(2));
  std::vector<float> table(64 * 16);
  sinusoidal_positions(table.data(), 64, 16);
  EXPECT_TRUE(testing::bitwise_equal(testing::f32_vector(f, "transformer.wpe.weight"), table));
  for (const std::string& name : f.names()) {
    if (name.ends_with(".bias")) {
      for (float v : f.f32(name)) ASSERT_EQ(v, 0.0f) << name;
    }
  }
  EXPECT_TRUE(testing::bitwise_equal(testing::f32_vector(f, "transformer.h.1.ln_2.weight"),
                                     potop_values(m, "h.1.ln_2.weight")));
  const json config = read_json_file(dir / "hf" / "config.json");
  EXPECT_EQ(config["attn_pdrop"].get<double>(), 0.125);
  EXPECT_EQ(config["embd_pdrop"].get<double>(), 0.125);
}

TEST(HfExport, ByteTokenizerIsByteLevelBpe) {
  const testing::TempDir dir("hf_export_byte");
  const LoadedGpt m = make_model(small_config(), std::make_unique<ByteTokenizer>());
  export_hf(m, dir / "hf");
  const json tok = read_json_file(dir / "hf" / "tokenizer.json");
  EXPECT_EQ(tok["pre_tokenizer"]["type"], "ByteLevel");
  EXPECT_EQ(tok["decoder"]["type"], "ByteLevel");
  const json& vocab = tok["model"]["vocab"];
  ASSERT_EQ(vocab.size(), 260u);
  EXPECT_EQ(vocab["<bos>"], 1);
  EXPECT_EQ(vocab["Ġ"], 4 + 0x20);   // GPT-2's byte-level space
  EXPECT_EQ(vocab["Ċ"], 4 + 0x0A);   // newline
  EXPECT_EQ(vocab["a"], 4 + 'a');
  EXPECT_EQ(vocab["Å"], 4 + 0xC5);  // 'ż' is C5 BC: printable Latin-1 bytes stand for themselves
  EXPECT_EQ(vocab["¼"], 4 + 0xBC);
  EXPECT_EQ(vocab["Ń"], 4 + 0xAD);  // 0xAD (soft hyphen), the 68th unprintable byte: U+0100 + 67
  ASSERT_EQ(tok["added_tokens"].size(), 4u);
  EXPECT_EQ(tok["added_tokens"][2]["content"], "<eos>");
  EXPECT_EQ(read_json_file(dir / "hf" / "vocab.json"), vocab);
  EXPECT_EQ(read_file(dir / "hf" / "merges.txt"), "#version: 0.2\n");
  const json config = read_json_file(dir / "hf" / "config.json");
  EXPECT_EQ(config["bos_token_id"], 1);
  EXPECT_EQ(config["eos_token_id"], 2);
  EXPECT_EQ(read_json_file(dir / "hf" / "tokenizer_config.json")["eos_token"], "<eos>");
  EXPECT_EQ(read_json_file(dir / "hf" / "generation_config.json")["max_length"], 64);
}

TEST(HfExport, RefusesWhatGpt2CannotComputeAndLeavesNothing) {
  const testing::TempDir dir("hf_export_refuse");
  GPTConfig post = small_config();
  post.norm = NormPlacement::kPost;
  std::string e = testing::error_message([&] { export_hf(make_model(post, char_tokenizer()), dir / "hf"); });
  EXPECT_TRUE(e.starts_with("norm: a post-LN model cannot be written as a GPT2LMHeadModel")) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  GPTConfig relu = small_config();
  relu.activation = Activation::kRelu;
  e = testing::error_message([&] { export_hf(make_model(relu, char_tokenizer()), dir / "hf"); });
  EXPECT_TRUE(e.starts_with("activation: a relu model cannot be written as a GPT2LMHeadModel")) << e;
  EXPECT_TRUE(entries(dir).empty());
}

TEST(HfExport, TheExactGeluAndAnotherEpsAreWrittenAsHuggingFaceNamesThem) {
  const testing::TempDir dir("hf_export_erf");
  GPTConfig c = small_config();
  c.activation = Activation::kGeluErf;
  c.norm_eps = 1e-6f;
  export_hf(make_model(c, char_tokenizer()), dir / "hf");
  const json config = read_json_file(dir / "hf" / "config.json");
  EXPECT_EQ(config["activation_function"], "gelu");  // Hugging Face's name for the erf form
  EXPECT_EQ(config["layer_norm_epsilon"].get<double>(), 1e-6);  // as written, not 9.99999997e-07
}

TEST(HfExport, WritesOnlyANewOrEmptyDirectory) {
  const testing::TempDir dir("hf_export_dest");
  const LoadedGpt m = make_model(small_config(), char_tokenizer());
  fs::create_directories(dir / "full");
  write_file_atomic(dir / "full" / "keep.txt", "mine\n");
  const std::string e = testing::error_message([&] { export_hf(m, dir / "full"); });
  EXPECT_NE(e.find((dir / "full").string() + ": already exists and is not empty"), std::string::npos) << e;
  EXPECT_EQ(entries(dir / "full"), std::vector<std::string>{"keep.txt"});
  write_file_atomic(dir / "file", "x");
  EXPECT_NE(testing::error_message([&] { export_hf(m, dir / "file"); }).find("is not a directory"), std::string::npos);

  fs::create_directories(dir / "empty");
  export_hf(m, dir / "empty");  // an empty directory is replaced
  EXPECT_TRUE(fs::exists(dir / "empty" / "model.safetensors"));
  export_hf(m, dir / "a" / "b" / "hf/");  // parents created; a trailing slash names the directory
  EXPECT_TRUE(fs::exists(dir / "a" / "b" / "hf" / "config.json"));
  EXPECT_EQ(entries(dir / "a" / "b"), std::vector<std::string>{"hf"});
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"a", "empty", "file", "full"}));
}

// A Llama with spread random weights (norm gains not 1), as make_model's GPT.
LoadedLlama make_llama(LlamaConfig config, std::unique_ptr<Tokenizer> tokenizer, uint64_t seed = 1) {
  LoadedLlama m;
  config.vocab_size = tokenizer->size();
  m.config = config.resolved();
  m.model = std::make_unique<Llama>(m.config);
  m.model->init_weights(seed);
  testing::spread_init(m.model->parameters(), seed);
  m.tokenizer = std::move(tokenizer);
  return m;
}

// C = 32, 4 query heads of 8 sharing n_kv_head K/V heads, F = 64.
LlamaConfig small_llama(int n_kv_head, bool tie) {
  LlamaConfig c;
  c.block_size = 64, c.n_layer = 2, c.n_head = 4, c.n_kv_head = n_kv_head, c.n_embd = 32, c.ffn_hidden = 64;
  c.rope_theta = 500000.0f, c.norm_eps = 1e-6f, c.tie_embeddings = tie;
  return c;
}

std::vector<std::string> llama_names(int n_layer, bool tie) {
  std::vector<std::string> names = {"model.embed_tokens.weight"};
  for (int l = 0; l < n_layer; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    for (const char* t : {"input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                          "self_attn.v_proj.weight", "self_attn.o_proj.weight", "post_attention_layernorm.weight",
                          "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"})
      names.push_back(p + t);
  }
  names.push_back("model.norm.weight");
  if (!tie) names.push_back("lm_head.weight");
  return names;
}

std::vector<float> llama_values(const LoadedLlama& m, const std::string& name) {
  const ParameterSet& p = m.model->parameters();
  const TensorSpec* spec = p.layout().find(name);
  EXPECT_NE(spec, nullptr) << name;
  if (!spec) return {};
  const float* v = p.values().at(*spec);
  return {v, v + spec->numel};
}

TEST(HfExport, WritesLlamaNamesShapesSplitsAndConfig) {
  const testing::TempDir dir("hf_export_llama");
  const LoadedLlama m = make_llama(small_llama(2, /*tie=*/false), std::make_unique<ByteTokenizer>());
  export_hf(*m.model, *m.tokenizer, dir / "hf");
  EXPECT_EQ(entries(dir), std::vector<std::string>{"hf"});
  EXPECT_EQ(entries(dir / "hf"), (std::vector<std::string>{"config.json", "generation_config.json", "merges.txt",
                                                           "model.safetensors", "tokenizer.json",
                                                           "tokenizer_config.json", "vocab.json"}));
  const SafetensorsFile f(dir / "hf" / "model.safetensors");
  EXPECT_EQ(f.names(), llama_names(2, false));
  EXPECT_EQ(f.metadata_value("format"), "pt");
  const int64_t C = 32, V = 260, F = 64, Q = 32, KV = 16, W = Q + 2 * KV;
  const std::string p = "model.layers.1.";
  EXPECT_EQ(f.info("model.embed_tokens.weight").shape, (Shape{V, C}));
  EXPECT_EQ(f.info("lm_head.weight").shape, (Shape{V, C}));
  EXPECT_EQ(f.info(p + "self_attn.q_proj.weight").shape, (Shape{Q, C}));  // nn.Linear: (out, in)
  EXPECT_EQ(f.info(p + "self_attn.k_proj.weight").shape, (Shape{KV, C}));
  EXPECT_EQ(f.info(p + "self_attn.v_proj.weight").shape, (Shape{KV, C}));
  EXPECT_EQ(f.info(p + "self_attn.o_proj.weight").shape, (Shape{C, C}));
  EXPECT_EQ(f.info(p + "mlp.gate_proj.weight").shape, (Shape{F, C}));
  EXPECT_EQ(f.info(p + "mlp.up_proj.weight").shape, (Shape{F, C}));
  EXPECT_EQ(f.info(p + "mlp.down_proj.weight").shape, (Shape{C, F}));
  EXPECT_EQ(f.info("model.norm.weight").shape, (Shape{C}));

  // Row r of a split projection is column c0 + r of potop's (in, out) tensor.
  const std::vector<float> qkv = llama_values(m, p + "self_attn.qkv_proj.weight");
  const std::vector<float> gate_up = llama_values(m, p + "mlp.gate_up_proj.weight");
  const std::vector<float> o = llama_values(m, p + "self_attn.o_proj.weight");
  const std::vector<float> down = llama_values(m, p + "mlp.down_proj.weight");
  const std::vector<float> q = testing::f32_vector(f, p + "self_attn.q_proj.weight"),
                           k = testing::f32_vector(f, p + "self_attn.k_proj.weight"),
                           v = testing::f32_vector(f, p + "self_attn.v_proj.weight"),
                           gate = testing::f32_vector(f, p + "mlp.gate_proj.weight"),
                           up = testing::f32_vector(f, p + "mlp.up_proj.weight"),
                           oo = testing::f32_vector(f, p + "self_attn.o_proj.weight"),
                           dd = testing::f32_vector(f, p + "mlp.down_proj.weight");
  for (int64_t in = 0; in < C; ++in) {
    for (int64_t r = 0; r < Q; ++r) ASSERT_EQ(q[r * C + in], qkv[in * W + r]);
    for (int64_t r = 0; r < KV; ++r) ASSERT_EQ(k[r * C + in], qkv[in * W + Q + r]);
    for (int64_t r = 0; r < KV; ++r) ASSERT_EQ(v[r * C + in], qkv[in * W + Q + KV + r]);
    for (int64_t r = 0; r < C; ++r) ASSERT_EQ(oo[r * C + in], o[in * C + r]);
    for (int64_t r = 0; r < F; ++r) {
      ASSERT_EQ(gate[r * C + in], gate_up[in * 2 * F + r]);
      ASSERT_EQ(up[r * C + in], gate_up[in * 2 * F + F + r]);
      ASSERT_EQ(dd[in * F + r], down[r * C + in]);
    }
  }
  for (const char* same : {"model.embed_tokens.weight", "lm_head.weight", "model.norm.weight",
                           "model.layers.0.input_layernorm.weight", "model.layers.1.post_attention_layernorm.weight"})
    EXPECT_TRUE(testing::bitwise_equal(testing::f32_vector(f, same), llama_values(m, same))) << same;

  const json config = read_json_file(dir / "hf" / "config.json");
  EXPECT_EQ(config["model_type"], "llama");
  EXPECT_EQ(config["architectures"], json::array({"LlamaForCausalLM"}));
  EXPECT_EQ(config["vocab_size"], V);
  EXPECT_EQ(config["hidden_size"], 32);
  EXPECT_EQ(config["intermediate_size"], 64);
  EXPECT_EQ(config["num_hidden_layers"], 2);
  EXPECT_EQ(config["num_attention_heads"], 4);
  EXPECT_EQ(config["num_key_value_heads"], 2);
  EXPECT_EQ(config["head_dim"], 8);
  EXPECT_EQ(config["max_position_embeddings"], 64);
  EXPECT_EQ(config["hidden_act"], "silu");
  EXPECT_EQ(config["rms_norm_eps"].get<double>(), 1e-6);  // as written, not the float's binary value
  EXPECT_EQ(config["rope_theta"].get<double>(), 500000.0);
  EXPECT_EQ(config["attention_bias"], false);
  EXPECT_EQ(config["mlp_bias"], false);
  EXPECT_EQ(config["tie_word_embeddings"], false);
  EXPECT_EQ(config["torch_dtype"], "float32");
  EXPECT_EQ(config["bos_token_id"], 1);
  EXPECT_EQ(config["eos_token_id"], 2);
  EXPECT_EQ(config["potop"]["model"]["n_kv_head"], 2);
  EXPECT_EQ(read_json_file(dir / "hf" / "generation_config.json")["max_length"], 64);
  EXPECT_EQ(read_json_file(dir / "hf" / "tokenizer_config.json")["model_max_length"], 64);

  // Tied: lm_head.weight left out, as save_pretrained leaves it.
  const LoadedLlama tied = make_llama(small_llama(4, /*tie=*/true), char_tokenizer());
  export_hf(*tied.model, *tied.tokenizer, dir / "tied");
  EXPECT_EQ(SafetensorsFile(dir / "tied" / "model.safetensors").names(), llama_names(2, true));
  EXPECT_EQ(read_json_file(dir / "tied" / "config.json")["tie_word_embeddings"], true);
  EXPECT_TRUE(read_json_file(dir / "tied" / "config.json")["bos_token_id"].is_null());
}

TEST(HfExport, LlamaRefusesATokenizerThatDoesNotFitAndLeavesNothing) {
  const testing::TempDir dir("hf_export_llama_refuse");
  const LoadedLlama m = make_llama(small_llama(4, true), char_tokenizer());
  const ByteTokenizer other;  // 260 tokens, the model's vocabulary is the char tokenizer's
  const std::string e = testing::error_message([&] { export_hf(*m.model, other, dir / "hf"); });
  EXPECT_TRUE(e.starts_with("vocab_size: the model has")) << e;
  EXPECT_TRUE(entries(dir).empty());
}

// One model directory per case, saved and loaded back as `potop export` will load it, exported,
// with potop's token ids and logits for kSentence in potop.safetensors ("ids" I32 (T), "logits"
// F32 (T, V)). Into $POTOP_HF_EXPORT_FIXTURES when set (the PyTorch check reads them there),
// else into a temporary directory, checking only that they are written.
TEST(HfExport, WritesTorchCheckFixtures) {
  const char* env = std::getenv("POTOP_HF_EXPORT_FIXTURES");
  testing::TempDir temp;
  fs::path root;
  if (env && *env) root = env;
  else {
    temp = testing::TempDir("hf_export_fixtures");
    root = temp.path();
  }

  struct Case {
    std::string name;
    GPTConfig config;
    std::unique_ptr<Tokenizer> tokenizer;
  };
  const std::string text = testing::multilingual_text(40000);
  std::vector<Case> cases;
  cases.push_back({"char", small_config(), char_tokenizer()});
  GPTConfig sinusoidal = small_config();
  sinusoidal.positions = PositionEncoding::kSinusoidal, sinusoidal.bias = false, sinusoidal.n_head = 4;
  cases.push_back({"char-sinusoidal-nobias", sinusoidal, char_tokenizer()});
  cases.push_back({"byte", small_config(), std::make_unique<ByteTokenizer>()});
  cases.push_back({"bpe", small_config(), SentencePieceTokenizer::train(text, "text", {.kind = "bpe", .vocab_size = 400})});
  cases.push_back(
      {"unigram", small_config(), SentencePieceTokenizer::train(text, "text", {.kind = "unigram", .vocab_size = 400})});

  uint64_t seed = 11;
  for (Case& c : cases) {
    const fs::path dir = root / c.name;
    fs::remove_all(dir);
    fs::create_directories(dir / "potop-model");
    {
      const LoadedGpt m = make_model(c.config, std::move(c.tokenizer), seed++);
      save_model_files(dir / "potop-model", m.config, *m.tokenizer, json::object());
      save_weights(dir / "potop-model" / "latest.safetensors", m.model->parameters(), gpt_header(m.config, *m.tokenizer));
    }
    const LoadedGpt m = load_gpt_dir(dir / "potop-model");
    export_hf(m, dir / "hf");

    const std::vector<int> ids = m.tokenizer->encode(kSentence);
    ASSERT_LE(ids.size(), static_cast<size_t>(m.config.block_size)) << c.name;
    KVCache cache = m.model->new_cache();
    m.model->forward(ids.data(), static_cast<int>(ids.size()), cache, LogitRows::kAll);
    const int64_t T = static_cast<int64_t>(ids.size()), V = m.config.vocab_size;
    write_safetensors(dir / "potop.safetensors",
                      {{"ids", Dtype::I32, {T}, ids.data()}, {"logits", Dtype::F32, {T, V}, m.model->logits()}},
                      {{"text", kSentence}, {"decoded", m.tokenizer->decode(ids)}});
    EXPECT_TRUE(fs::exists(dir / "hf" / "model.safetensors")) << c.name;
    EXPECT_TRUE(fs::exists(dir / "hf" / "tokenizer_config.json")) << c.name;
  }
  EXPECT_TRUE(fs::exists(root / "bpe" / "hf" / "tokenizer.model"));

  // Llamas: multi-head, tied, char; grouped-query (2 K/V heads for 4), untied, SentencePiece BPE.
  struct LlamaCase {
    std::string name;
    LlamaConfig config;
    std::unique_ptr<Tokenizer> tokenizer;
  };
  std::vector<LlamaCase> llamas;
  llamas.push_back({"llama-char", small_llama(4, true), char_tokenizer()});
  llamas.push_back({"llama-bpe-gqa-untied", small_llama(2, false),
                    SentencePieceTokenizer::train(text, "text", {.kind = "bpe", .vocab_size = 400})});
  for (LlamaCase& c : llamas) {
    const fs::path dir = root / c.name;
    fs::remove_all(dir);
    fs::create_directories(dir / "potop-model");
    {
      const LoadedLlama m = make_llama(c.config, std::move(c.tokenizer), seed++);
      save_model_files(dir / "potop-model", m.config, *m.tokenizer, json::object());
      save_weights(dir / "potop-model" / "latest.safetensors", m.model->parameters(),
                   ModelHeader{llama_kind().name, to_json(m.config), m.tokenizer.get()});
    }
    const LoadedLlama m = load_llama_dir(dir / "potop-model");
    export_hf(*m.model, *m.tokenizer, dir / "hf");
    const std::vector<int> ids = m.tokenizer->encode(kSentence);
    KVCache cache = m.model->new_cache();
    m.model->forward(ids.data(), static_cast<int>(ids.size()), cache, LogitRows::kAll);
    const int64_t T = static_cast<int64_t>(ids.size()), V = m.config.vocab_size;
    write_safetensors(dir / "potop.safetensors",
                      {{"ids", Dtype::I32, {T}, ids.data()}, {"logits", Dtype::F32, {T, V}, m.model->logits()}},
                      {{"text", kSentence}, {"decoded", m.tokenizer->decode(ids)}});
    EXPECT_TRUE(fs::exists(dir / "hf" / "model.safetensors")) << c.name;
  }
}

}  // namespace
}  // namespace potop
