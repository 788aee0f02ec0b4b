// The table of model kinds (nn/model_kind.h): every row builds the model its parameter layout
// describes and implements the tasks it lists, an unknown kind names the known ones, and the one loader round-trips a saved model
// of every kind.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "checkpoint/model_dir.h"
#include "models/gpt/gpt_kind.h"
#include "checkpoint/weights.h"
#include "core/error.h"
#include "nn/model_kind.h"
#include "nn/tasks.h"
#include "support/testing.h"
#include "tokenizer/char_tokenizer.h"

namespace potop {
namespace {

// A small config of each kind (the fields not given keep their defaults).
nlohmann::json small_config(const ModelKind& kind, int vocab_size) {
  nlohmann::json j = {{"vocab_size", vocab_size}, {"block_size", 8}};
  if (kind.name == "bow") j["dim"] = 8, j["attention"] = "additive", j["attn_hidden"] = 4;
  else j["n_embd"] = 8, j["n_layer"] = 1, j["n_head"] = 2;
  if (kind.name == "classifier") j["labels"] = {"no", "yes"}, j["pooling"] = "mean";
  return j;
}

void expect_same_layout(const Layout& a, const Layout& b, const std::string& kind) {
  ASSERT_EQ(a.specs().size(), b.specs().size()) << kind;
  for (size_t i = 0; i < a.specs().size(); ++i) {
    EXPECT_EQ(a.specs()[i].name, b.specs()[i].name) << kind;
    EXPECT_EQ(a.specs()[i].shape, b.specs()[i].shape) << kind << " " << a.specs()[i].name;
    EXPECT_EQ(a.specs()[i].offset, b.specs()[i].offset) << kind << " " << a.specs()[i].name;
  }
  EXPECT_EQ(a.total_floats(), b.total_floats()) << kind;
}

TEST(ModelKinds, EveryKindBuildsTheLayoutItDescribes) {
  ASSERT_GE(model_kinds().size(), 3u);
  for (const ModelKind* kind : model_kinds()) {
    const nlohmann::json config = kind->normalize(small_config(*kind, 11), "test");
    EXPECT_EQ(config.value("vocab_size", 0), 11) << kind->name;
    const std::unique_ptr<Model> model = kind->make(config);
    expect_same_layout(model->parameters().layout(), kind->parameter_layout(config), kind->name);
    EXPECT_EQ(&model_kind(kind->name), kind);
    EXPECT_FALSE(kind->description.empty() || kind->noun.empty() || kind->hint.empty() || kind->commands.empty())
        << kind->name;
    EXPECT_FALSE(kind->describe(config).empty()) << kind->name;
  }
}

// The tasks a row lists are the interfaces its model implements (nn/tasks.h), no more, no less:
// the commands trust the row before loading (info, eval, serve) and the interface after.
TEST(ModelKinds, EveryKindsTasksAreTheInterfacesItsModelImplements) {
  for (const ModelKind* kind : model_kinds()) {
    const std::unique_ptr<Model> model = kind->make(kind->normalize(small_config(*kind, 11), "test"));
    EXPECT_EQ(kind->can(Task::kCausalLM), task<CausalLM>(*model) != nullptr) << kind->name;
    EXPECT_EQ(kind->can(Task::kSelfAttention), task<SelfAttention>(*model) != nullptr) << kind->name;
    EXPECT_EQ(kind->can(Task::kMaskedLM), task<MaskedLM>(*model) != nullptr) << kind->name;
    EXPECT_EQ(kind->can(Task::kTextEncoder), task<TextEncoder>(*model) != nullptr) << kind->name;
    EXPECT_EQ(kind->can(Task::kSequenceClassifier), task<SequenceClassifier>(*model) != nullptr) << kind->name;
    EXPECT_EQ(kind->can(Task::kSeq2Seq), task<Seq2Seq>(*model) != nullptr) << kind->name;
    EXPECT_EQ(kind->can(Task::kWordAttention), task<WordAttention>(*model) != nullptr) << kind->name;
    // A causal LM is a language model; every kind can do something.
    if (kind->can(Task::kCausalLM)) {
      EXPECT_TRUE(kind->can(Task::kLanguageModel)) << kind->name;
    }
    EXPECT_FALSE(kind->tasks.empty()) << kind->name;
    for (const Task t : kind->tasks) EXPECT_NE(to_string(t), "?") << kind->name;
  }
}

// A causal LM's interface gives what generation reads: its sizes, a cache of its context, and the
// logits of the positions it was fed.
TEST(ModelKinds, ACausalLMGivesTheLogitsOfWhatItIsFed) {
  const ModelKind& kind = model_kind("gpt");
  const std::unique_ptr<Model> model = kind.make(kind.normalize(small_config(kind, 11), "test"));
  CausalLM& lm = *task<CausalLM>(*model);
  EXPECT_EQ(lm.vocab_size(), 11);
  EXPECT_EQ(lm.context_length(), 8);
  KVCache cache = lm.new_cache();
  const int ids[3] = {1, 2, 3};
  lm.forward(ids, 3, cache, LogitRows::kAll);
  EXPECT_EQ(cache.length, 3);
  for (int i = 0; i < 3 * 11; ++i) EXPECT_TRUE(std::isfinite(lm.logits()[i]));
}

TEST(ModelKinds, AnInvalidConfigIsAnErrorNamingItsSource) {
  for (const ModelKind* kind : model_kinds()) {
    nlohmann::json bad = small_config(*kind, 11);
    bad["block_size"] = 0;
    const std::string msg = testing::error_message([&] { kind->normalize(bad, "where.json"); });
    EXPECT_NE(msg.find("where.json"), std::string::npos) << kind->name << ": " << msg;
  }
}

TEST(ModelKinds, AnUnknownKindListsTheKnownOnes) {
  const std::string msg = testing::error_message([] { model_kind("lstm"); });
  EXPECT_NE(msg.find("'lstm'"), std::string::npos) << msg;
  for (const ModelKind* kind : model_kinds()) EXPECT_NE(msg.find(kind->name), std::string::npos) << msg;
}

// Each kind saved as its trainer saves it (config.json, tokenizer, weights with the kind in their
// header) loads back through load_model_dir with the same kind, config and weights; a caller
// that needs another kind gets an error naming the command that takes this one.
TEST(ModelKinds, LoadModelDirRoundTripsEveryKind) {
  const CharTokenizer tokenizer = CharTokenizer::from_text(U"abcdefgh ijk\n");
  for (const ModelKind* kind : model_kinds()) {
    const testing::TempDir temp("kinds_" + kind->name);
    const fs::path& dir = temp.path();
    // The model's ids past the tokenizer's (BERT's [MASK]) count in its vocab_size.
    const int vocab = expected_vocab_size(*kind, small_config(*kind, tokenizer.size()), tokenizer.size());
    const nlohmann::json config = kind->normalize(small_config(*kind, vocab), "test");
    std::unique_ptr<Model> model = kind->make(config);
    model->parameters().init(7);
    save_model_files(dir, kind->name, config, tokenizer, {{"steps", 1}});
    save_weights(dir / "latest.safetensors", model->parameters(), ModelHeader{kind->name, config, &tokenizer},
                 {{"step", "1"}});

    for (const fs::path& path : {dir, dir / "latest.safetensors"}) {
      const LoadedModel m = load_model_dir(path);
      EXPECT_EQ(m.kind, kind);
      EXPECT_EQ(m.config, config) << kind->name;
      EXPECT_EQ(m.tokenizer->to_json(), tokenizer.to_json());
      EXPECT_EQ(m.metadata.at("step"), "1");
      const Arena& loaded = m.model->parameters().values();
      const Arena& want = model->parameters().values();
      ASSERT_EQ(loaded.floats(), want.floats());
      EXPECT_EQ(0, std::memcmp(loaded.data(), want.data(), want.bytes())) << kind->name << " " << path;
    }
    for (const ModelKind* other : model_kinds()) {
      if (other == kind) continue;
      const std::string msg = testing::error_message([&] { load_model_dir(dir, "", other->name); });
      EXPECT_NE(msg.find(dir.string()), std::string::npos) << msg;
      EXPECT_NE(msg.find(other->noun), std::string::npos) << msg;
      EXPECT_NE(msg.find(kind->hint), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace potop
