// RunKit::refuse_on_resume, the one rule of the options only a new run takes (a tokenizer, a model
// to start from): a new run takes them; a resumed one refuses the first given, in the words every
// trainer's message has ("--tokenizer starts a new run; a resumed run keeps its tokenizer").
#include <gtest/gtest.h>

#include <cstdio>

#include "core/error.h"
#include "train/run_kit.h"

namespace potop {
namespace {

TEST(RunKit, ANewRunTakesTheOptionsOfANewRun) {
  const RunControl control;
  const RunKit kit(control, "gpt", "potop train", stderr);
  EXPECT_NO_THROW(kit.refuse_on_resume({{"--tokenizer", true}, {"--init-from", true}}, "model and tokenizer"));
}

TEST(RunKit, AResumedRunRefusesTheFirstGiven) {
  RunControl control;
  control.resume = "runs/x";
  const RunKit kit(control, "gpt", "potop train", stderr);
  EXPECT_NO_THROW(kit.refuse_on_resume({{"--tokenizer", false}, {"--init-from", false}}, "model and tokenizer"));
  try {
    kit.refuse_on_resume({{"--init-from", false}, {"--tokenizer", true}, {"--init-embeddings", true}},
                         "model and tokenizer");
    ADD_FAILURE() << "--tokenizer on resume must be refused";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--tokenizer starts a new run; a resumed run keeps its model and tokenizer");
  }
  try {
    kit.refuse_on_resume({{"--init-embeddings", true}}, "weights");
    ADD_FAILURE() << "--init-embeddings on resume must be refused";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--init-embeddings starts a new run; a resumed run keeps its weights");
  }
}

}  // namespace
}  // namespace potop
