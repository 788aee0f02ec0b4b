// Model directory round trip and the errors for damaged or mismatched directories.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "checkpoint/model_dir.h"
#include "tokenizer/char_tokenizer.h"
#include "core/error.h"
#include "support/testing.h"

namespace potop {
namespace {

struct Saved {
  fs::path dir;
  GPTConfig config;
  CharTokenizer tokenizer;
};

Saved save_small_model(const std::string& name) {
  Saved s{testing::temp_dir(name), {}, CharTokenizer::from_text(U"Zażółć gęślą jaźń — Привет 你好 🙂\n")};
  s.config.vocab_size = s.tokenizer.size();
  s.config.block_size = 8, s.config.n_layer = 2, s.config.n_head = 2, s.config.n_embd = 8;
  GPT model(s.config);
  model.init_weights(1);
  save_model_files(s.dir, s.config, s.tokenizer, {{"steps", 1}});
  save_weights(s.dir / "latest.safetensors", model.parameters(), gpt_header(s.config, s.tokenizer), {{"step", "1"}});
  return s;
}

TEST(ModelDir, RoundTripGivesIdenticalWeights) {
  const Saved s = save_small_model("roundtrip");
  GPT original(s.config);
  original.init_weights(1);
  const LoadedModel m = load_model_dir(s.dir);
  EXPECT_EQ(m.weights.filename(), "latest.safetensors");
  EXPECT_EQ(m.metadata.at("step"), "1");
  EXPECT_EQ(m.tokenizer->to_json(), s.tokenizer.to_json());
  EXPECT_EQ(to_json(m.config), to_json(s.config));
  const Arena& loaded = m.model->parameters().values();
  const Arena& want = original.parameters().values();
  ASSERT_EQ(loaded.floats(), want.floats());
  EXPECT_EQ(0, std::memcmp(loaded.data(), want.data(), want.bytes()));
}

TEST(ModelDir, ErrorsNameTheCulprit) {
  const Saved s = save_small_model("errors");
  EXPECT_NE(testing::error_message([&] { load_model_dir(s.dir / "nope"); }).find("does not exist"), std::string::npos);
  // A config whose shapes differ from the tensors.
  {
    const fs::path bad = testing::temp_dir("errors_config");
    fs::copy(s.dir, bad, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    GPTConfig wider = s.config;
    wider.n_embd = 16;
    save_model_files(bad, wider, s.tokenizer, {});
    const std::string msg = testing::error_message([&] { load_model_dir(bad); });
    EXPECT_NE(msg.find("latest.safetensors"), std::string::npos) << msg;
    EXPECT_NE(msg.find("shape"), std::string::npos) << msg;
  }
  // A vocabulary of the right size but other characters.
  {
    const fs::path bad = testing::temp_dir("errors_vocab");
    fs::copy(s.dir, bad, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    std::vector<char32_t> chars = s.tokenizer.chars();
    chars.back() = U'X';
    CharTokenizer(chars).save(bad / "vocab.json");
    const std::string msg = testing::error_message([&] { load_model_dir(bad); });
    EXPECT_NE(msg.find("different vocabulary"), std::string::npos) << msg;
  }
  // A truncated checkpoint.
  {
    const fs::path bad = testing::temp_dir("errors_truncated");
    fs::copy(s.dir, bad, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    fs::resize_file(bad / "latest.safetensors", fs::file_size(bad / "latest.safetensors") / 2);
    const std::string msg = testing::error_message([&] { load_model_dir(bad); });
    EXPECT_NE(msg.find("latest.safetensors"), std::string::npos) << msg;
  }
  // A config.json that is not JSON.
  {
    const fs::path bad = testing::temp_dir("errors_json");
    fs::copy(s.dir, bad, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    std::ofstream(bad / "config.json") << "{ not json";
    const std::string msg = testing::error_message([&] { load_model_dir(bad); });
    EXPECT_NE(msg.find("config.json"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace potop
