#include "models/encoder_decoder/translation_eval.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "core/threads.h"
#include "data/parallel_corpus.h"
#include "models/encoder_decoder/translation_model.h"
#include "train/batch_parallel.h"
#include "train/evaluate.h"

namespace potop {

EvalResult evaluate_pairs(LoadedModel& loaded, const EvalRequest& a) {
  const std::string kind = loaded.kind->name;
  const TranslationModel m = as_translation_model(std::move(loaded));
  require_sentence_pairs(m, a.model);
  const std::string data = !a.data.empty() ? a.data : (fs::path(a.model) / "test.tsv").string();
  const bool source_first = source_is_first_column(m, a.columns, data);
  const PairFile file = read_pairs(data);
  const int block = m.config.block_size;
  std::vector<EncodedPair> examples;
  int too_long = 0;
  for (const SentencePair& p : file.pairs) {
    const std::string where = data + ":" + std::to_string(p.line);
    EncodedPair e{m.tokenizer->encode(source_first ? p.first : p.second, where, Unknown::kReplace, nullptr),
                  m.tokenizer->encode(source_first ? p.second : p.first, where, Unknown::kReplace, nullptr)};
    e.source.push_back(kEosId);
    if (int(e.source.size()) > block || int(e.target.size()) + 1 > block) {
      ++too_long;
      continue;
    }
    examples.push_back(std::move(e));
  }
  if (examples.empty()) throw Error(data + ": no pair fits in the model's block size " + std::to_string(block));
  if (a.announce) a.announce();
  // The model's probabilities, not the label-smoothed training loss: the same weights in a model
  // built without smoothing.
  EncoderDecoderConfig plain = m.config;
  plain.label_smoothing = 0;
  EncoderDecoder model(plain);
  const Arena& weights = m.model->parameters().values();
  std::memcpy(model.parameters().values().data(), weights.data(), weights.bytes());
  PairBatches batches(examples, std::max(1, a.batch_size) * block, 0);
  BatchParallel parallel(model, get_threads());
  int next = 0;
  const LossTotal total = evaluate_loss(parallel, [&](Batch& b) {
    if (next == batches.size()) return false;
    batches.fill_sorted(next++, b);
    return true;
  });
  const double loss = total.mean(), perplexity = std::exp(loss);
  EvalResult r;
  r.json = {{"kind", kind},
            {"loss", loss},
            {"perplexity", perplexity},
            {"tokens", total.targets},
            {"pairs", examples.size()},
            {"too_long", too_long},
            {"bad_lines", file.skipped},
            {"checkpoint", m.weights.string()}};
  char line[512];
  std::snprintf(line, sizeof line, "%zu pairs, %ld target tokens scored%s\nloss %.4f per target token | perplexity %.3f\n",
                examples.size(), total.targets,
                too_long ? (", " + std::to_string(too_long) + " longer than the block size left out").c_str() : "", loss,
                perplexity);
  r.text = data + " (" + m.weights.string() + "): " + line;
  return r;
}

}  // namespace potop
