// The run options every trainer shares, and resuming them: one generic resume_options serves
// the GPT's, the bag-of-words LM's and the translation model's options alike, so the rules
// (shape refused, schedule kept, --steps not below the saved step) cannot drift between models.
#include <gtest/gtest.h>

#include "core/error.h"
#include "models/bow/bow_options.h"
#include "models/encoder_decoder/translation_trainer.h"
#include "models/gpt/gpt_options.h"
#include "support/testing.h"
#include "train/resume.h"

namespace potop {
namespace {

// A state saved at step 30 of a 100-step run of these options.
template <class Options>
TrainState saved_at_30(Options o) {
  o.steps = 100;
  TrainState state;
  state.step = 30;
  state.options = fields_to_json(fields_of(o));
  return state;
}

template <class Options>
Options resumed(const TrainState& state, const Options& requested, std::vector<std::string> given,
                std::vector<std::string>* notes = nullptr) {
  RunControl control;
  control.resume = "run";
  control.given = std::move(given);
  std::vector<std::string> ignored;
  return resume_options(state, requested, control, "run", notes ? *notes : ignored);
}

template <class Options>
class ResumeEveryModel : public ::testing::Test {};
using AllOptions = ::testing::Types<GptOptions, BowOptions, TranslationOptions>;
TYPED_TEST_SUITE(ResumeEveryModel, AllOptions);

TYPED_TEST(ResumeEveryModel, KeepsTheSavedOptionsAndTakesTheGivenOnes) {
  TypeParam saved;
  saved.seed = 7, saved.lr = 0.5f;
  TypeParam asked;
  asked.lr = 0.25f, asked.seed = 99;  // only --lr is given
  const TypeParam o = resumed(saved_at_30(saved), asked, {"lr"});
  EXPECT_EQ(o.seed, 7u);
  EXPECT_FLOAT_EQ(o.lr, 0.25f);
  EXPECT_EQ(o.out, "run");
}

TYPED_TEST(ResumeEveryModel, RefusesStepsBelowTheCheckpoint) {
  TypeParam asked;
  asked.steps = 10;
  const std::string e = testing::error_message([&] { resumed(saved_at_30(TypeParam{}), asked, {"steps"}); });
  EXPECT_NE(e.find("--steps 10 is below the step of the checkpoint being resumed (30)"), std::string::npos) << e;
}

TYPED_TEST(ResumeEveryModel, MoreStepsKeepTheCosineDecay) {
  TypeParam saved;
  saved.lr_schedule = LrShape::kCosine;
  TypeParam asked;
  asked.steps = 200;
  std::vector<std::string> notes;
  const TypeParam o = resumed(saved_at_30(saved), asked, {"steps"}, &notes);
  EXPECT_EQ(o.steps, 200);
  EXPECT_EQ(o.decay_steps(), 100);  // where the saved run's decay ended
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.back().find("keeps the run's schedule"), std::string::npos) << notes.back();
  asked.lr_decay_steps = 200;  // unless the decay is stretched on purpose
  EXPECT_EQ(resumed(saved_at_30(saved), asked, {"steps", "lr-decay-steps"}).decay_steps(), 200);
}

TYPED_TEST(ResumeEveryModel, RefusesAnotherOut) {
  TypeParam asked;
  asked.out = "elsewhere";
  const std::string e = testing::error_message([&] { resumed(saved_at_30(TypeParam{}), asked, {"out"}); });
  EXPECT_NE(e.find("--out elsewhere differs from the directory being resumed"), std::string::npos) << e;
}

TEST(ResumeOptions, RefusesAnotherShapeOfEachModel) {
  GptOptions gpt;
  gpt.model.n_layer = 6;
  EXPECT_NE(testing::error_message([&] { resumed(saved_at_30(GptOptions{}), gpt, {"n-layer"}); }).find("--n-layer 6"),
            std::string::npos);
  BowOptions bow;
  bow.model.n_embd = 8;
  EXPECT_NE(testing::error_message([&] { resumed(saved_at_30(BowOptions{}), bow, {"dim"}); }).find("another shape"),
            std::string::npos);
  TranslationOptions mt;
  mt.vocab_size = 100;
  EXPECT_NE(testing::error_message([&] { resumed(saved_at_30(TranslationOptions{}), mt, {"vocab-size"}); })
                .find("--vocab-size 100"),
            std::string::npos);
}

TEST(ResumeOptions, AMovedSplitNeedsAllowDataChange) {
  TranslationOptions mt;
  mt.dev_size = 10;
  EXPECT_NE(testing::error_message([&] { resumed(saved_at_30(TranslationOptions{}), mt, {"dev-size"}); })
                .find("--allow-data-change"),
            std::string::npos);
}

TEST(RunOptions, EveryModelHasItsDefaultsAndOneFieldList) {
  EXPECT_EQ(GptOptions{}.batch_size, 12);
  EXPECT_EQ(BowOptions{}.batch_size, 32);
  // The translation model's: docs/translation.md's measured recipe (cosine 1e-3, BPE 4000).
  EXPECT_EQ(TranslationOptions{}.lr_schedule, LrShape::kCosine);
  EXPECT_FLOAT_EQ(TranslationOptions{}.lr, 1e-3f);
  EXPECT_EQ(TranslationOptions{}.warmup, 200);
  EXPECT_EQ(TranslationOptions{}.vocab_size, 4000);
  EXPECT_FLOAT_EQ(TranslationOptions{}.eps, 1e-9f);
  // A translation model sizes its batches in tokens: no --batch-size, no --eval-iters.
  TranslationOptions mt;
  EXPECT_EQ(find_field(fields_of(mt), "batch-size"), nullptr);
  EXPECT_NE(find_field(fields_of(mt), "grad-accum"), nullptr);
  BowOptions bow;
  for (const char* name : {"grad-accum", "lr-schedule", "mpi-timeout", "parallel"})
    EXPECT_NE(find_field(fields_of(bow), name), nullptr) << name;
}

TEST(RunOptions, ImpossibleValuesNameTheFlag) {
  RunOptions o;
  o.grad_accum = 0;
  EXPECT_NE(testing::error_message([&] { validate(o); }).find("--grad-accum must be positive"), std::string::npos);
  o = RunOptions{};
  o.eps = 0;
  EXPECT_NE(testing::error_message([&] { validate(o); }).find("--eps"), std::string::npos);
  o = RunOptions{};
  o.lr_schedule = LrShape::kNoam, o.warmup = 0;
  EXPECT_NE(testing::error_message([&] { validate(o); }).find("--warmup"), std::string::npos);
}

}  // namespace
}  // namespace potop
