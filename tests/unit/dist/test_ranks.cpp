// The pieces of multi-process training that need no second process: the setup agreement's
// messages (seen from rank 0, the others' answers scripted), the one-process communicator, and
// the sampler's skip that keeps the ranks' batch sequences in step. tests/cli/mpi.sh runs the
// real thing under mpirun.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "data/dataset.h"
#include "dist/communicator.h"

namespace potop {
namespace {

// Rank 0 of a run whose other ranks answer all_strings with `others`.
class ScriptedRanks final : public Communicator {
 public:
  explicit ScriptedRanks(std::vector<std::string> others) : others_(std::move(others)) {}
  int rank() const override { return 0; }
  int size() const override { return 1 + static_cast<int>(others_.size()); }
  int local_size() const override { return size(); }
  std::string describe() const override { return "scripted"; }
  void sum_floats(float*, size_t) override {}
  double sum(double v) override { return v; }
  bool any(bool v) override { return v; }
  std::vector<std::string> all_strings(const std::string& mine) override {
    std::vector<std::string> all{mine};
    all.insert(all.end(), others_.begin(), others_.end());
    return all;
  }
  [[noreturn]] void abort(int) override { std::abort(); }

 private:
  std::vector<std::string> others_;
};

const nlohmann::json kPrint = {{"potop_version", "0.1.0"}, {"options", {{"lr", 0.001}, {"steps", 10}}}};

std::string ok(const nlohmann::json& fingerprint) { return nlohmann::json{{"fingerprint", fingerprint}}.dump(); }
std::string failed(const std::string& error) { return nlohmann::json{{"error", error}}.dump(); }

TEST(AgreeOnSetup, EqualFingerprintsAgree) {
  ScriptedRanks ranks({ok(kPrint), ok(kPrint)});
  EXPECT_EQ(agree_on_setup(ranks, "", kPrint), "");
}

TEST(AgreeOnSetup, NamesTheRankAndTheFirstKeyThatDiffers) {
  nlohmann::json other = kPrint;
  other["options"]["lr"] = 0.002;
  ScriptedRanks ranks({ok(kPrint), ok(other)});
  EXPECT_EQ(agree_on_setup(ranks, "", kPrint),
            "the ranks of this run disagree: rank 2 of 3 has options.lr = 0.002, rank 0 has 0.001; start every rank "
            "with the same potop, flags and data");
  nlohmann::json older = kPrint;
  older["potop_version"] = "0.0.9";
  ScriptedRanks versions({ok(older)});
  EXPECT_NE(agree_on_setup(versions, "", kPrint).find("rank 1 of 2 has potop_version = \"0.0.9\""), std::string::npos);
  nlohmann::json missing = kPrint;
  missing["options"].erase("steps");  // a key only rank 0 has
  ScriptedRanks fewer({ok(missing)});
  EXPECT_NE(agree_on_setup(fewer, "", kPrint).find("has options.steps = null, rank 0 has 10"), std::string::npos);
}

TEST(AgreeOnSetup, ReportsTheFirstFailedRank) {
  ScriptedRanks ranks({failed("missing.txt: file not found"), failed("other.txt: file not found")});
  EXPECT_EQ(agree_on_setup(ranks, "", kPrint), "rank 1 of 3: missing.txt: file not found (and 1 more rank failed)");
  ScriptedRanks own({ok(kPrint)});  // rank 0's own error wins over the fingerprints
  EXPECT_EQ(agree_on_setup(own, "--lr must be positive", nullptr), "rank 0 of 2: --lr must be positive");
}

TEST(AgreeOnSetup, TheSameErrorOnEveryRankIsSaidOnce) {
  ScriptedRanks ranks({failed("--n-embd (33) must be divisible by --n-head (2)")});
  EXPECT_EQ(agree_on_setup(ranks, "--n-embd (33) must be divisible by --n-head (2)", nullptr),
            "--n-embd (33) must be divisible by --n-head (2)");
}

TEST(SingleProcess, EveryCollectiveIsTheIdentity) {
  SingleProcess one;
  float g[3] = {1.5f, -2.0f, 3.25f};
  one.sum_floats(g, 3);
  EXPECT_EQ(g[0], 1.5f);
  EXPECT_EQ(g[2], 3.25f);
  EXPECT_EQ(one.sum(0.1), 0.1);
  EXPECT_TRUE(one.any(true));
  EXPECT_FALSE(one.any(false));
  EXPECT_EQ(agree_on_setup(one, "", kPrint), "");
  EXPECT_EQ(agree_on_setup(one, "bad --data", nullptr), "bad --data");
}

// Rank r of P draws batches r, r + P, …: skipping the others must leave its generator exactly
// where drawing them would.
TEST(BatchSampler, SkipMovesAsNextWould) {
  std::vector<int> tokens(500);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int>(i * 7 % 31);
  const int B = 3, T = 8;
  BatchSampler drawn(tokens, B, T, 42), skipped(tokens, B, T, 42);
  std::vector<int> x1(B * T), y1(B * T), x2(B * T), y2(B * T);
  for (int batch = 0; batch < 5; ++batch) {
    drawn.next(x1.data(), y1.data());
    if (batch % 2 == 0) {
      skipped.skip();
      continue;
    }
    skipped.next(x2.data(), y2.data());
    EXPECT_EQ(x1, x2) << "batch " << batch;
    EXPECT_EQ(y1, y2) << "batch " << batch;
  }
  EXPECT_EQ(drawn.state(), skipped.state());
}

}  // namespace
}  // namespace potop
