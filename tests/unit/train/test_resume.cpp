// Exact resume, crash-safe checkpoints and numerical guards, in process (the CLI tests in
// tests/cli/ do the same through real signals, SIGKILL and file-size limits).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "checkpoint/model_dir.h"
#include "models/gpt/gpt_kind.h"
#include "core/error.h"
#include "core/file_io.h"
#include "support/testing.h"
#include "checkpoint/train_state.h"
#include "models/gpt/gpt.h"
#include "tokenizer/char_tokenizer.h"
#include "train/memory_check.h"
#include "train/resume.h"
#include "models/gpt/gpt_trainer.h"

namespace potop {
namespace {

fs::path write_text(const fs::path& path, const std::string& text) {
  testing::write_file(path, text);
  return path;
}

std::string corpus() {
  std::string s;
  for (int i = 0; i < 60; ++i) s += "Kmicic ruszył z kopyta, a pan Zagłoba zawołał: — Żywo, mości panowie! ";
  return s;
}

GptOptions tiny(const fs::path& out, const fs::path& data) {
  GptOptions o;
  o.data = data.string(), o.out = out.string();
  o.model.n_layer = 2, o.model.n_head = 2, o.model.n_embd = 16, o.model.block_size = 16, o.batch_size = 4;
  o.steps = 30, o.eval_interval = 10, o.eval_iters = 2, o.log_interval = 1, o.warmup = 5;
  o.model.dropout = 0.1f, o.threads = 1, o.lr = 1e-2f, o.min_lr = 1e-3f;
  return o;
}

// metrics.jsonl without the timing fields, one string per record.
std::vector<std::string> records(const fs::path& dir) {
  std::vector<std::string> out;
  std::ifstream in(dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    j.erase("elapsed_s");
    j.erase("tokens_per_s");
    out.push_back(j.dump());
  }
  return out;
}

std::string params_of(const fs::path& weights) {
  const SafetensorsFile f(weights);
  std::string bytes;
  for (const auto& name : f.names()) {
    const auto b = f.bytes(name);
    bytes.append(reinterpret_cast<const char*>(b.data()), b.size());
  }
  return bytes;
}

struct Quiet {
  std::FILE* f = std::fopen("/dev/null", "w");
  ~Quiet() { std::fclose(f); }
};

RunResult run(const GptOptions& o, const RunControl& c = {}) {
  Quiet q;
  return train_gpt(o, q.f, c);
}

RunControl stop_at(int step) {
  RunControl c;
  c.stop_requested = [step](int done) { return done == step; };
  return c;
}

RunControl resume(const fs::path& what, std::vector<std::string> given = {}) {
  RunControl c;
  c.resume = what.string();
  c.given = std::move(given);
  return c;
}

class Resume : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    data_ = write_text(dir_ / "text.txt", corpus());
    reference_ = tiny(dir_ / "reference", data_);
    run(reference_);
  }
  testing::TempDir dir_;
  fs::path data_;
  GptOptions reference_;
};

TEST_F(Resume, StoppedAndResumedRunMatchesAnUninterruptedOne) {
  // Stop between evaluations (13), on an evaluation step (20), and resume twice.
  const GptOptions o = tiny(dir_ / "run", data_);
  const RunResult first = run(o, stop_at(13));
  EXPECT_TRUE(first.interrupted);
  EXPECT_EQ(first.steps_done, 13);
  const TrainState saved = read_train_state(SafetensorsFile(dir_ / "run" / kResumeFile));
  EXPECT_EQ(saved.step, 13);
  EXPECT_EQ(saved.adam_steps, 13);
  RunControl second = resume(dir_ / "run");
  second.stop_requested = [](int done) { return done == 20; };
  EXPECT_TRUE(run(o, second).interrupted);
  const RunResult last = run(o, resume(dir_ / "run"));
  EXPECT_FALSE(last.interrupted);
  EXPECT_EQ(last.steps_done, 30);
  EXPECT_EQ(records(dir_ / "run"), records(dir_ / "reference"));
  for (const char* f : {"latest.safetensors", "best.safetensors", "resume.safetensors"})
    EXPECT_EQ(params_of(dir_ / "run" / f), params_of(dir_ / "reference" / f)) << f;
}

TEST_F(Resume, MetricsWrittenAfterTheCheckpointAreReplaced) {
  // A crash after step 17 leaves records up to 17 but a checkpoint at 10 (and a half line).
  const GptOptions o = tiny(dir_ / "run", data_);
  run(o, stop_at(10));
  const auto all = records(dir_ / "reference");
  {
    std::ofstream m(dir_ / "run" / "metrics.jsonl", std::ios::trunc);
    std::ifstream r(dir_ / "reference" / "metrics.jsonl");
    std::string line;
    for (int i = 0; i < 19 && std::getline(r, line); ++i) m << line << '\n';  // eval 0, 1..10, eval 10, 11..17
    m << "{\"kind\": \"train\", \"st";
  }
  write_text(dir_ / "run" / "latest.safetensors.tmp-999999999", "half a file");
  run(o, resume(dir_ / "run"));
  EXPECT_EQ(records(dir_ / "run"), all);
  EXPECT_FALSE(fs::exists(dir_ / "run" / "latest.safetensors.tmp-999999999"));
}

TEST_F(Resume, KeepWritesResumableSnapshots) {
  GptOptions o = tiny(dir_ / "run", data_);
  o.keep = 7;
  run(o);
  for (int s : {7, 14, 21, 28}) {
    char name[40];
    std::snprintf(name, sizeof name, "step-%06d.safetensors", s);
    EXPECT_TRUE(fs::exists(dir_ / "run" / name)) << name;
  }
  EXPECT_FALSE(fs::exists(dir_ / "run" / "step-000000.safetensors"));
  // Resume from an older snapshot: the run is redone from step 14 and ends identical.
  run(o, resume(dir_ / "run" / "step-000014.safetensors"));
  EXPECT_EQ(records(dir_ / "run"), records(dir_ / "reference"));
  EXPECT_EQ(params_of(dir_ / "run" / "latest.safetensors"), params_of(dir_ / "reference" / "latest.safetensors"));
  // A snapshot is also a checkpoint that sample and eval can load.
  const LoadedGpt m = load_gpt_dir(dir_ / "run", (dir_ / "run" / "step-000021.safetensors").string());
  EXPECT_EQ(m.metadata.at("step"), "21");
}

TEST_F(Resume, FinishedRunCanTrainLonger) {
  const GptOptions o = tiny(dir_ / "run", data_);
  run(o);
  EXPECT_EQ(run(o, resume(dir_ / "run")).steps_done, 30);  // nothing to do
  GptOptions longer = o;
  longer.steps = 40;
  EXPECT_EQ(run(longer, resume(dir_ / "run", {"steps"})).steps_done, 40);
  EXPECT_EQ(read_train_state(SafetensorsFile(dir_ / "run" / kResumeFile)).step, 40);
}

TEST_F(Resume, IncompatibleChangesAreRefusedNamingWhatDiffers) {
  const GptOptions o = tiny(dir_ / "run", data_);
  run(o, stop_at(12));
  GptOptions wider = o;
  wider.model.n_embd = 32;
  std::string msg = testing::error_message([&] { run(wider, resume(dir_ / "run", {"n-embd"})); });
  EXPECT_NE(msg.find("--n-embd 32 (the run used 16)"), std::string::npos) << msg;
  // Without the flag being given, the checkpoint's value is used and nothing is refused.
  EXPECT_NO_THROW(run(wider, [&] { auto c = resume(dir_ / "run"); c.stop_requested = [](int) { return true; }; return c; }()));

  GptOptions fewer = o;
  fewer.steps = 5;
  msg = testing::error_message([&] { run(fewer, resume(dir_ / "run", {"steps"})); });
  EXPECT_NE(msg.find("--steps 5"), std::string::npos) << msg;

  GptOptions elsewhere = o;
  elsewhere.out = (dir_ / "other").string();
  msg = testing::error_message([&] { run(elsewhere, resume(dir_ / "run", {"out"})); });
  EXPECT_NE(msg.find("--out"), std::string::npos) << msg;

  GptOptions split = o;
  split.val_fraction = 0.2;
  msg = testing::error_message([&] { run(split, resume(dir_ / "run", {"val-fraction"})); });
  EXPECT_NE(msg.find("--val-fraction"), std::string::npos) << msg;

  // A different text is refused, unless allowed; then its characters must be in the vocabulary.
  GptOptions other = o;
  other.data = write_text(dir_ / "other.txt", "Żywo, mości panowie! " + corpus()).string();
  msg = testing::error_message([&] { run(other, resume(dir_ / "run", {"data"})); });
  EXPECT_NE(msg.find("other.txt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--allow-data-change"), std::string::npos) << msg;
  RunControl allowed = resume(dir_ / "run", {"data"});
  allowed.allow_data_change = true;
  allowed.stop_requested = [](int done) { return done == 14; };
  EXPECT_TRUE(run(other, allowed).interrupted);
  GptOptions alien = o;
  alien.data = write_text(dir_ / "alien.txt", corpus() + "Жж").string();
  msg = testing::error_message([&] { run(alien, allowed); });
  EXPECT_NE(msg.find("'Ж' (U+0416)"), std::string::npos) << msg;

  // A changed learning rate is possible (after a divergence, say): it is applied, not refused.
  GptOptions lower = o;
  lower.lr = 5e-3f;
  EXPECT_EQ(run(lower, resume(dir_ / "run", {"lr"})).steps_done, 30);
  EXPECT_EQ(read_train_state(SafetensorsFile(dir_ / "run" / kResumeFile)).options["lr"].get<float>(), 5e-3f);
}

TEST_F(Resume, DamagedOrMissingStateIsRefused) {
  const GptOptions o = tiny(dir_ / "run", data_);
  run(o, stop_at(12));
  const fs::path state = dir_ / "run" / kResumeFile;
  EXPECT_NE(testing::error_message([&] { run(o, resume(dir_ / "nowhere")); }).find("does not exist"), std::string::npos);
  EXPECT_NE(testing::error_message([&] { run(o, resume(dir_)); }).find("not a model directory"), std::string::npos);
  EXPECT_NE(testing::error_message([&] { run(o, resume(dir_ / "run" / "latest.safetensors")); }).find("not a training state"),
            std::string::npos);
  const std::string good = read_file(state);
  std::string flipped = good;
  flipped[flipped.size() - 3] ^= 0x10;
  write_file_atomic(state, flipped);
  std::string msg = testing::error_message([&] { run(o, resume(dir_ / "run")); });
  EXPECT_NE(msg.find("resume.safetensors: checksum mismatch"), std::string::npos) << msg;
  write_file_atomic(state, good.substr(0, good.size() / 2));
  msg = testing::error_message([&] { run(o, resume(dir_ / "run")); });
  EXPECT_NE(msg.find("resume.safetensors"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  write_file_atomic(state, good);
  std::vector<char32_t> chars = CharTokenizer::load(dir_ / "run" / "vocab.json").chars();
  std::swap(chars[0], chars[1]);
  CharTokenizer(chars).save(dir_ / "run" / "vocab.json");
  msg = testing::error_message([&] { run(o, resume(dir_ / "run")); });
  EXPECT_NE(msg.find("vocab.json: does not match"), std::string::npos) << msg;
}

TEST_F(Resume, NonFiniteLossStopsOrIsSkipped) {
  GptOptions o = tiny(dir_ / "run", data_);
  o.lr = 1e30f, o.min_lr = 0, o.warmup = 0, o.grad_clip = 0;
  const std::string msg = testing::error_message([&] { run(o); });
  EXPECT_NE(msg.find("step "), std::string::npos) << msg;
  EXPECT_NE(msg.find("training stopped"), std::string::npos) << msg;
  EXPECT_NE(msg.find("resume.safetensors (step 0)"), std::string::npos) << msg;
  o.skip_nonfinite = true;
  RunControl again;
  again.force = true;  // a new run in the same directory
  const RunResult r = run(o, again);
  EXPECT_GT(r.nonfinite_skipped, 0);
  EXPECT_EQ(r.steps_done, 30);
}

TEST(TrainState, RejectsDamagedMetadata) {
  const testing::TempDir dir("state_meta");
  GPTConfig c;
  c.vocab_size = 5, c.block_size = 4, c.n_layer = 1, c.n_head = 1, c.n_embd = 4;
  GPT model(c);
  model.init_weights(1);
  Arena m(model.parameters().layout()), v(model.parameters().layout());
  TrainState s;
  s.step = 3, s.threads = 1, s.sampler = Rng(7).state(), s.config = to_json(c);
  const CharTokenizer tokenizer(std::vector<char32_t>{U'a', U'b', U'c', U'd', U'e'});
  save_train_state(dir / "s.safetensors", model.parameters(), gpt_header(c, tokenizer),
                   {{"adamw.m.", &m}, {"adamw.v.", &v}}, s);
  const TrainState back = read_train_state(SafetensorsFile(dir / "s.safetensors"));
  EXPECT_EQ(back.step, 3);
  EXPECT_EQ(back.sampler, s.sampler);
  EXPECT_TRUE(std::isinf(back.best_score));
  EXPECT_TRUE(std::isnan(back.val_loss));
  // A state file whose metadata was edited by hand: each key is checked.
  std::vector<SafetensorsEntry> none;
  Metadata meta{{"potop.kind", "train_state"}, {"potop.state_version", "1"}, {"potop.step", "-4"}};
  write_safetensors(dir / "bad.safetensors", none, meta);
  EXPECT_NE(testing::error_message([&] { read_train_state(SafetensorsFile(dir / "bad.safetensors")); }).find("'potop.step' is out of range"),
            std::string::npos);
  meta["potop.step"] = "4";
  meta["potop.adam_steps"] = "4x";
  write_safetensors(dir / "bad.safetensors", none, meta);
  EXPECT_NE(testing::error_message([&] { read_train_state(SafetensorsFile(dir / "bad.safetensors")); })
                .find("'potop.adam_steps' is not an integer"),
            std::string::npos);
  meta["potop.state_version"] = "2";
  write_safetensors(dir / "bad.safetensors", none, meta);
  EXPECT_NE(testing::error_message([&] { read_train_state(SafetensorsFile(dir / "bad.safetensors")); }).find("version"),
            std::string::npos);
}

TEST(TrainState, TruncateMetricsKeepsRecordsUpToTheStep) {
  const testing::TempDir dir("truncate_metrics");
  write_text(dir / "m.jsonl",
             "{\"kind\":\"eval\",\"step\":0}\n{\"kind\":\"train\",\"step\":1}\n{\"kind\":\"train\",\"step\":2}\n"
             "not json\n{\"kind\":\"eval\",\"step\":2}\n{\"kind\":\"train\",\"step\":3}\n{\"kind\":\"tr");
  truncate_metrics(dir / "m.jsonl", 2);
  EXPECT_EQ(read_file(dir / "m.jsonl"),
            "{\"kind\":\"eval\",\"step\":0}\n{\"kind\":\"train\",\"step\":1}\n{\"kind\":\"train\",\"step\":2}\n"
            "{\"kind\":\"eval\",\"step\":2}\n");
  truncate_metrics(dir / "missing.jsonl", 2);
  EXPECT_FALSE(fs::exists(dir / "missing.jsonl"));
}

TEST(MemoryCheck, ImpossibleSizesAreRefusedBeforeAllocating) {
  GPTConfig c;
  c.vocab_size = 100, c.block_size = 4096, c.n_layer = 4, c.n_head = 64, c.n_embd = 1024;
  std::string msg = testing::error_message([&] { check_training_fits(GPT::plan(c, {4096, 4096})); });
  EXPECT_NE(msg.find("--batch-size"), std::string::npos) << msg;
  c.block_size = 64, c.n_head = 4, c.n_embd = 8192, c.n_layer = 1024;
  msg = testing::error_message([&] { check_training_fits(GPT::plan(c, {1, 64})); });
  EXPECT_NE(msg.find("GiB"), std::string::npos) << msg;
  c.n_embd = 64, c.n_layer = 2;
  EXPECT_NO_THROW(check_training_fits(GPT::plan(c, {8, 64})));
}

}  // namespace
}  // namespace potop
