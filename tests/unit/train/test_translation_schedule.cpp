// The paper's learning-rate schedule: lr = factor · d^-0.5 · min(s^-0.5, s · warmup^-1.5), with
// s = step + 1: linear warm-up to the peak d^-0.5 · warmup^-0.5 at s = warmup, then 1/√s. It is
// the translation model's --lr-schedule noam, as any trainer's (train/schedule.h).
#include <gtest/gtest.h>

#include <cmath>

#include "models/encoder_decoder/translation_trainer.h"

namespace potop {
namespace {

TEST(TranslationSchedule, NoamIsThePapersFormula) {
  TranslationOptions o;
  o.lr_schedule = LrShape::kNoam, o.model.n_embd = 512, o.warmup = 4000, o.lr = 1.0f;
  const LRSchedule lr = o.schedule(o.model.n_embd);
  const double peak = std::pow(512.0, -0.5) * std::pow(4000.0, -0.5);  // 6.9877e-4
  EXPECT_NEAR(lr.at(3999), peak, 1e-9);
  EXPECT_NEAR(lr.at(0), std::pow(512.0, -0.5) * std::pow(4000.0, -1.5), 1e-12);
  EXPECT_NEAR(lr.at(15999), std::pow(512.0, -0.5) / std::sqrt(16000.0), 1e-9);
  EXPECT_LT(lr.at(1999), lr.at(3999));
  EXPECT_LT(lr.at(7999), lr.at(3999));
  o.lr = 2.0f;
  EXPECT_NEAR(o.schedule(o.model.n_embd).at(3999), 2 * peak, 1e-9);
}

TEST(TranslationSchedule, CosineIsPotops) {
  TranslationOptions o;
  o.lr_schedule = LrShape::kCosine, o.lr = 1e-3f, o.min_lr = 1e-4f, o.warmup = 10, o.steps = 100;
  const LRSchedule lr = o.schedule(o.model.n_embd);
  EXPECT_NEAR(lr.at(9), 1e-3 * 10 / 11, 1e-9);
  EXPECT_NEAR(lr.at(100), 1e-4, 1e-9);
}

}  // namespace
}  // namespace potop
