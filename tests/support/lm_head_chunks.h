// Forces the LM head's chunked loss-only passes (nn/lm_head.h) on a small model for the length of
// a scope, so that a test of a few rows runs the path GPT-2's vocabulary takes.
#pragma once
#include "nn/lm_head.h"

namespace potop::testing {

class LmHeadChunksGuard {
 public:
  // rows > 0: every loss-only pass is chunked, `rows` rows at a time; 0: the defaults stay.
  LmHeadChunksGuard(int rows, int vocab_size) : saved_(lm_head_chunks()) {
    if (rows > 0) set_lm_head_chunks({0, int64_t{rows} * vocab_size});
  }
  ~LmHeadChunksGuard() { set_lm_head_chunks(saved_); }
  LmHeadChunksGuard(const LmHeadChunksGuard&) = delete;
  LmHeadChunksGuard& operator=(const LmHeadChunksGuard&) = delete;

 private:
  LMHeadChunks saved_;
};

}  // namespace potop::testing
