// potop import (checkpoint/hf_import.h): a Hugging Face directory potop exported comes back as the
// same model, tensor for tensor and logit for logit; what cannot be imported is refused in one line
// and leaves nothing. tests/torch/check_hf_import.py checks directories PyTorch writes (F16, BF16,
// shards, GPT2Model's names, buffers) against PyTorch's forward pass, through
// HfImport.WritesLogitsOfImportedModels.
#include "checkpoint/hf_import.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "checkpoint/model_dir.h"
#include "core/file_io.h"
#include "core/safetensors.h"
#include "models/gpt/gpt_hf_export.h"
#include "models/llama/llama_hf_export.h"
#include "models/llama/llama_kind.h"
#include "support/multilingual.h"
#include "support/testing.h"
#include "support/torch_oracle.h"
#include "tokenizer/sentencepiece_tokenizer.h"

namespace potop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::unique_ptr<Tokenizer> bpe() {
  static const std::string text = testing::multilingual_text(40000);
  return SentencePieceTokenizer::train(text, "text", {.kind = "bpe", .vocab_size = 400});
}

// A potop model directory of a GPT (or, with llama, a grouped-query Llama with an untied head),
// random weights spread so that every tensor matters, exported to dir / "hf".
fs::path exported(const fs::path& dir, bool llama) {
  std::unique_ptr<Tokenizer> tokenizer = bpe();
  if (llama) {
    LlamaConfig c;
    c.block_size = 64, c.n_layer = 2, c.n_head = 4, c.n_kv_head = 2, c.n_embd = 32, c.ffn_hidden = 64;
    c.rope_theta = 500000.0f, c.norm_eps = 1e-6f, c.tie_embeddings = false, c.vocab_size = tokenizer->size();
    Llama m(c.resolved());
    m.init_weights(3);
    testing::spread_init(m.parameters(), 3);
    export_hf(m, *tokenizer, dir / "hf");
  } else {
    GPTConfig c;
    c.block_size = 64, c.n_layer = 2, c.n_head = 2, c.n_embd = 16, c.vocab_size = tokenizer->size();
    GPT m(c);
    m.init_weights(2);
    testing::spread_init(m.parameters(), 2);
    export_hf(m, *tokenizer, dir / "hf");
  }
  return dir / "hf";
}

// Logits of the model in a potop directory for ids, (T, V).
std::vector<float> logits(const LoadedModel& m, const std::vector<int>& ids) {
  auto* lm = dynamic_cast<CausalLM*>(m.model.get());
  EXPECT_NE(lm, nullptr);
  if (!lm) return {};
  KVCache cache = lm->new_cache();
  lm->forward(ids.data(), static_cast<int>(ids.size()), cache, LogitRows::kAll);
  return {lm->logits(), lm->logits() + ids.size() * static_cast<size_t>(lm->vocab_size())};
}

void expect_same_parameters(const Model& a, const Model& b) {
  const ParameterSet &pa = a.parameters(), &pb = b.parameters();
  ASSERT_EQ(pa.layout().specs().size(), pb.layout().specs().size());
  for (size_t i = 0; i < pa.layout().specs().size(); ++i) {
    const TensorSpec& s = pa.layout().specs()[i];
    ASSERT_EQ(s.name, pb.layout().specs()[i].name);
    ASSERT_EQ(s.shape, pb.layout().specs()[i].shape);
    EXPECT_EQ(pa.dense_values(static_cast<ParamId>(i)), pb.dense_values(static_cast<ParamId>(i))) << s.name;
  }
}

TEST(HfImport, ExportedGptAndLlamaComeBackTheSame) {
  for (const bool llama : {false, true}) {
    const testing::TempDir dir("hf_import_round_trip");
    const fs::path hf = exported(dir.path(), llama);
    const ImportSummary s = import_hf_dir(hf, dir / "potop");
    EXPECT_EQ(s.architecture, llama ? "LlamaForCausalLM" : "GPT2LMHeadModel");
    EXPECT_EQ(s.dtypes, "F32");
    EXPECT_EQ(s.kind->name, llama ? "llama" : "gpt");
    const LoadedModel back = load_model_dir(dir / "potop");
    EXPECT_EQ(back.tokenizer->hash(), bpe()->hash());
    const json files = read_json_file(dir / "potop" / "config.json");
    EXPECT_EQ(files["imported"]["architecture"], s.architecture);

    // Export again: the same tensors, bit for bit, so the model potop reads is the model it wrote.
    back.kind->export_hf(*back.model, *back.tokenizer, {"f32", "again", (dir / "again").string(), ""});
    const SafetensorsFile first(hf / "model.safetensors"), second(dir / "again" / "model.safetensors");
    EXPECT_EQ(first.names(), second.names());
    for (const std::string& name : first.names())
      EXPECT_TRUE(testing::bitwise_equal(testing::f32_vector(first, name), testing::f32_vector(second, name))) << name;
    // And a second import of that export is the first one's model.
    import_hf_dir(dir / "again", dir / "potop2");
    const LoadedModel twice = load_model_dir(dir / "potop2");
    expect_same_parameters(*back.model, *twice.model);
    const std::vector<int> ids = back.tokenizer->encode("Zażółć gęślą jaźń, pchnąć w tę łódź jeża!");
    EXPECT_TRUE(testing::bitwise_equal(logits(back, ids), logits(twice, ids)));
  }
}

// Runs import_hf_dir and returns its error, "" when it succeeds.
std::string import_error(const fs::path& src, const fs::path& out) {
  try {
    import_hf_dir(src, out);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void edit_config(const fs::path& hf, const std::function<void(json&)>& edit) {
  json j = read_json_file(hf / "config.json");
  edit(j);
  write_file_atomic(hf / "config.json", j.dump(2));
}

TEST(HfImport, RefusesInOneLineNamingTheFieldAndWritesNothing) {
  const testing::TempDir dir("hf_import_refusals");
  const fs::path hf = exported(dir.path(), false), out = dir / "out";
  const auto refused = [&](const std::string& needle) {
    const std::string e = import_error(hf, out);
    EXPECT_NE(e.find(needle), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    EXPECT_FALSE(fs::exists(out)) << needle;
  };
  edit_config(hf, [](json& j) { j["activation_function"] = "silu"; });
  refused("config.json: activation_function \"silu\": ");
  edit_config(hf, [](json& j) { j["activation_function"] = "gelu_new", j["layer_norm_epsilon"] = 0.0; });
  refused("norm_eps must be in (0, 1)");
  edit_config(hf, [](json& j) { j["layer_norm_epsilon"] = 1e-5, j["n_layer"] = 3; });
  refused("tensor transformer.h.2.ln_1.weight is missing");
  edit_config(hf, [](json& j) { j["n_layer"] = 1; });
  refused("tensor transformer.h.1.ln_1.weight is not one of GPT-2's");
  edit_config(hf, [](json& j) { j["n_layer"] = 2, j["vocab_size"] = 401; });
  refused("vocab_size 401: the tokenizer beside it has 400 tokens");
  edit_config(hf, [](json& j) { j["vocab_size"] = 400, j["architectures"] = {"GPTNeoXForCausalLM"}; });
  refused("architectures GPTNeoXForCausalLM: potop imports GPT2LMHeadModel, GPT2Model, LlamaForCausalLM");
  edit_config(hf, [](json& j) { j["architectures"] = {"GPT2LMHeadModel"}; });

  // Weights: only a pickle; a tensor of a type potop does not read.
  fs::rename(hf / "model.safetensors", dir / "kept.safetensors");
  write_file_atomic(hf / "pytorch_model.bin", "not read");
  refused("holds pytorch_model.bin but no model.safetensors");
  fs::remove(hf / "pytorch_model.bin");
  {
    const SafetensorsFile kept(dir / "kept.safetensors");
    std::vector<SafetensorsEntry> entries;
    std::vector<double> f64;
    for (const std::string& name : kept.names()) {
      const SafetensorsInfo& i = kept.info(name);
      if (name == "transformer.ln_f.bias") {
        for (float v : kept.f32(name)) f64.push_back(v);
        entries.push_back({name, Dtype::F64, i.shape, f64.data()});
      } else {
        entries.push_back({name, i.dtype, i.shape, kept.bytes(name).data()});
      }
    }
    write_safetensors(hf / "model.safetensors", entries);
  }
  refused("tensor transformer.ln_f.bias is F64; potop imports F32, F16 and BF16 tensors");
  fs::rename(dir / "kept.safetensors", hf / "model.safetensors");

  // No tokenizer files; an --out that holds something.
  fs::rename(hf / "tokenizer.model", dir / "tokenizer.model");
  refused("no tokenizer files");
  fs::rename(dir / "tokenizer.model", hf / "tokenizer.model");
  fs::create_directories(out);
  write_file_atomic(out / "notes.txt", "mine");
  const std::string e = import_error(hf, out);
  EXPECT_NE(e.find("--out " + out.string() + ": exists"), std::string::npos) << e;
  EXPECT_EQ(read_file(out / "notes.txt"), "mine");
  fs::remove_all(out);
  EXPECT_EQ(import_error(hf, out), "");  // and with everything back, it imports
}

// tests/torch/check_hf_import.py imports the directories PyTorch wrote into
// $POTOP_HF_IMPORT_CHECK/<case>/potop and reads back the logits written here for the ids in
// <case>/ids.json. Without the variable: a case of its own, an exported GPT, whose logits must be
// the original model's.
TEST(HfImport, WritesLogitsOfImportedModels) {
  const char* env = std::getenv("POTOP_HF_IMPORT_CHECK");
  testing::TempDir temp;
  fs::path root;
  if (env && *env) {
    root = env;
  } else {
    temp = testing::TempDir("hf_import_logits");
    root = temp.path();
    fs::create_directories(root / "own");
    import_hf_dir(exported(root / "own", false), root / "own" / "potop");
    write_file_atomic(root / "own" / "ids.json", "[5, 17, 3, 250, 399, 0, 42]");
  }
  int cases = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    if (!fs::exists(e.path() / "ids.json")) continue;
    const std::vector<int> ids = read_json_file(e.path() / "ids.json").get<std::vector<int>>();
    const LoadedModel m = load_model_dir(e.path() / "potop");
    std::vector<float> got = logits(m, ids);
    const int64_t T = static_cast<int64_t>(ids.size()), V = static_cast<int64_t>(got.size()) / T;
    if (m.model->parameters().any_quantized()) {
      // A model that kept a GGUF file's q8_0/q4_0 matrices multiplies activations rounded to
      // int8 (kernels/quant.h), as llama.cpp does. Its logits go beside; those compared with
      // PyTorch's float forward are of its float twin: the same weights, dequantized.
      write_safetensors(e.path() / "potop_quantized_logits.safetensors", {{"logits", Dtype::F32, {T, V}, got.data()}});
      LoadedModel twin;
      twin.kind = m.kind;
      twin.model = m.kind->make(m.config);
      ParameterSet& p = twin.model->parameters();
      for (size_t i = 0; i < p.layout().specs().size(); ++i) {
        const std::vector<float> v = m.model->parameters().dense_values(static_cast<ParamId>(i));
        std::copy(v.begin(), v.end(), p.values().at(p.layout().specs()[i]));
      }
      got = logits(twin, ids);
    }
    write_safetensors(e.path() / "potop_logits.safetensors", {{"logits", Dtype::F32, {T, V}, got.data()}});
    ++cases;
    if (!env || !*env) {  // the exported model itself, from the export's own weights
      GPTConfig c;
      c.block_size = 64, c.n_layer = 2, c.n_head = 2, c.n_embd = 16, c.vocab_size = 400;
      GPT original(c);
      original.init_weights(2);
      testing::spread_init(original.parameters(), 2);
      KVCache cache = original.new_cache();
      original.forward(ids.data(), static_cast<int>(T), cache, LogitRows::kAll);
      EXPECT_TRUE(testing::bitwise_equal(got, std::vector<float>(original.logits(), original.logits() + T * V)));
    }
  }
  EXPECT_GE(cases, 1);
}

}  // namespace
}  // namespace potop
