#include "models/bert/bert_eval.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "checkpoint/model_dir.h"
#include "core/error.h"
#include "core/threads.h"
#include "models/bert/bert_kind.h"
#include "models/bert/masked_batches.h"
#include "train/batch_parallel.h"
#include "train/eval_text.h"

namespace potop {

EvalResult evaluate_masked_lm(LoadedModel& m, const EvalRequest& a) {
  if (a.data.empty()) throw Error("--data is required for " + m.kind->noun + ": a text file, or a data directory");
  if (a.stride != 0) throw Error("--stride: not for " + m.kind->noun + ", whose windows do not overlap");
  EvalTokens text;
  read_eval_tokens(a, *m.tokenizer, "the model's tokenizer (" + m.weights.string() + ")", a.unknown, text);
  const BertConfig config = config_from_json<BertConfig>(m.config);
  const int B = a.batch_size, T = config.block_size, W = T - 2;
  const long n = static_cast<long>(text.tokens.size());
  if (n < 1) throw Error(a.data + ": has no token to score");
  const MaskingRule rule = masking_rule(a.mask_fraction, bert_specials(config, *m.tokenizer), *m.tokenizer);
  if (a.announce) a.announce();
  BatchParallel parallel(*m.model, std::min(get_threads(), B));
  std::vector<int> windows(static_cast<size_t>(B) * W), lengths(static_cast<size_t>(B));
  MaskedRows rows;
  MaskedLMScore score;
  Rng rng(a.seed);
  for (long start = 0; start < n;) {
    int rows_now = 0;
    for (; rows_now < B && start < n; ++rows_now, start += W) {
      const int len = static_cast<int>(std::min<long>(W, n - start));
      text.tokens.read(size_t(start), size_t(len), windows.data() + size_t(rows_now) * W);
      lengths[size_t(rows_now)] = len;
    }
    score.add(parallel, rows.fill(windows.data(), lengths.data(), rows_now, T, rule, rng));
  }
  EvalResult r;
  r.json = {{"kind", m.kind->name},
            {"loss", score.loss()},
            {"perplexity", std::exp(score.loss())},
            {"accuracy", score.accuracy()},
            {"masked", score.masked},
            {"tokens", n},
            {"checkpoint", m.weights.string()}};
  char line[512];
  std::snprintf(line, sizeof line, "%ld tokens, %ld masked (%.0f%%)\nmasked-LM loss %.4f per token | perplexity %.3f | "
                "accuracy %.2f%%\n", n, score.masked, 100 * a.mask_fraction, score.loss(), std::exp(score.loss()),
                100 * score.accuracy());
  r.text = a.data + " (" + m.weights.string() + "): " + line;
  return r;
}

}  // namespace potop
