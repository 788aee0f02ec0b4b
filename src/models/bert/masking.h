// BERT's masked-LM corruption of one sequence: a fraction of its tokens is chosen (15%, at least
// one), and each chosen token becomes [MASK] 80% of the time, a random token 10% and stays itself
// 10%; the model predicts the original at every chosen position (targets), and only there (-1
// elsewhere). The caller draws a new mask every time a sequence is seen (RoBERTa's dynamic
// masking) by seeding the generator from the micro-batch.
#pragma once
#include <span>

#include "core/rng.h"
#include "tokenizer/tokenizer.h"

namespace potop {

struct MaskingRule {
  double fraction = 0.15;  // of the maskable tokens
  int mask_id = -1;        // [MASK]
  int first_random = 0;    // random replacements are drawn from [first_random, vocab_end): the
  int vocab_end = 0;       // tokenizer's ordinary tokens, never a special one
  // The row around the text (masked_batches.h): [CLS] text [SEP], then [PAD]s.
  int cls_id = kBosId, sep_id = kEosId, pad_id = kPadId;
};

// How many of n maskable tokens are chosen: round(fraction · n), at least 1 (0 when n is 0).
int masked_count(const MaskingRule& rule, int n);

// Corrupts tokens[first, end) in place, with the original of each chosen token in targets (the
// same span; targets elsewhere are left as they are: the caller fills them with -1).
void mask_tokens(std::span<int> tokens, std::span<int> targets, int first, int end, const MaskingRule& rule, Rng& rng);

}  // namespace potop
