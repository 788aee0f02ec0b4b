// Model directory round trip and the errors for damaged or mismatched directories.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "checkpoint/model_dir.h"
#include "models/gpt/gpt_kind.h"
#include "core/error.h"
#include "support/testing.h"
#include "tokenizer/char_tokenizer.h"

namespace potop {
namespace {

struct Saved {
  testing::TempDir dir;
  GPTConfig config;
  CharTokenizer tokenizer;
};

Saved save_small_model(const std::string& name) {
  Saved s{testing::TempDir(name), {}, CharTokenizer::from_text(U"Zażółć gęślą jaźń — Привет 你好 🙂\n")};
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
  const LoadedGpt m = load_gpt_dir(s.dir);
  EXPECT_EQ(m.weights.filename(), "latest.safetensors");
  EXPECT_EQ(m.metadata.at("step"), "1");
  EXPECT_EQ(m.tokenizer->to_json(), s.tokenizer.to_json());
  EXPECT_EQ(to_json(m.config), to_json(s.config));
  const Arena& loaded = m.model->parameters().values();
  const Arena& want = original.parameters().values();
  ASSERT_EQ(loaded.floats(), want.floats());
  EXPECT_EQ(0, std::memcmp(loaded.data(), want.data(), want.bytes()));
}

// The default checkpoint: the newest weights that are not worse than the best.
TEST(ModelDir, ChoosesTheNewestWeightsNotWorseThanTheBest) {
  const Saved s = save_small_model("choice");
  GPT model(s.config);
  const ModelHeader header = gpt_header(s.config, s.tokenizer);
  auto save = [&](const char* file, const Metadata& meta) { save_weights(s.dir / file, model.parameters(), header, meta); };
  // Interrupted after the step-0 evaluation: latest (not evaluated) is newer than best.
  save("best.safetensors", {{"step", "0"}, {"val_loss", "4.4"}});
  save("latest.safetensors", {{"step", "812"}});
  CheckpointChoice c = choose_checkpoint(s.dir, "");
  EXPECT_EQ(c.path.filename(), "latest.safetensors");
  EXPECT_NE(c.why.find("step 812, not evaluated (the newest weights; best.safetensors is step 0, val loss 4.4000)"),
            std::string::npos) << c.why;
  // Finished, the last evaluation worse than an earlier one: best, and why.
  save("best.safetensors", {{"step", "1750"}, {"val_loss", "1.94"}});
  save("latest.safetensors", {{"step", "2000"}, {"val_loss", "1.95"}});
  c = choose_checkpoint(s.dir, "");
  EXPECT_EQ(c.path.filename(), "best.safetensors");
  EXPECT_NE(c.why.find("is newer but worse"), std::string::npos) << c.why;
  // Newer and better is both: latest.
  save("latest.safetensors", {{"step", "2000"}, {"val_loss", "1.90"}});
  EXPECT_EQ(choose_checkpoint(s.dir, "").path.filename(), "latest.safetensors");
  // Short names.
  save("step-000500.safetensors", {{"step", "500"}});
  EXPECT_EQ(choose_checkpoint(s.dir, "step-500").path.filename(), "step-000500.safetensors");
  EXPECT_EQ(choose_checkpoint(s.dir, "best").path.filename(), "best.safetensors");
  EXPECT_NE(testing::error_message([&] { choose_checkpoint(s.dir, "resume"); }).find("resume.safetensors: checkpoint not found"),
            std::string::npos);
}

TEST(ModelDir, ErrorsNameTheCulprit) {
  const Saved s = save_small_model("errors");
  EXPECT_NE(testing::error_message([&] { load_gpt_dir(s.dir / "nope"); }).find("does not exist"), std::string::npos);
  // A config whose shapes differ from the tensors.
  {
    const testing::TempDir bad("errors_config");
    fs::copy(s.dir, bad, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    GPTConfig wider = s.config;
    wider.n_embd = 16;
    save_model_files(bad, wider, s.tokenizer, {});
    const std::string msg = testing::error_message([&] { load_gpt_dir(bad); });
    EXPECT_NE(msg.find("latest.safetensors"), std::string::npos) << msg;
    EXPECT_NE(msg.find("shape"), std::string::npos) << msg;
  }
  // A vocabulary of the right size but other characters.
  {
    const testing::TempDir bad("errors_vocab");
    fs::copy(s.dir, bad, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    std::vector<char32_t> chars = s.tokenizer.chars();
    chars.back() = U'X';
    CharTokenizer(chars).save(bad / "vocab.json");
    const std::string msg = testing::error_message([&] { load_gpt_dir(bad); });
    EXPECT_NE(msg.find("different vocabulary"), std::string::npos) << msg;
  }
  // A truncated checkpoint.
  {
    const testing::TempDir bad("errors_truncated");
    fs::copy(s.dir, bad, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    fs::resize_file(bad / "latest.safetensors", fs::file_size(bad / "latest.safetensors") / 2);
    const std::string msg = testing::error_message([&] { load_gpt_dir(bad); });
    EXPECT_NE(msg.find("latest.safetensors"), std::string::npos) << msg;
  }
  // A config.json that is not JSON.
  {
    const testing::TempDir bad("errors_json");
    fs::copy(s.dir, bad, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    std::ofstream(bad / "config.json") << "{ not json";
    const std::string msg = testing::error_message([&] { load_gpt_dir(bad); });
    EXPECT_NE(msg.find("config.json"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace potop
