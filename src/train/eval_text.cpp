#include "train/eval_text.h"

#include "core/error.h"
#include "data/text_file.h"

namespace potop {

void read_eval_tokens(const EvalRequest& a, const Tokenizer& tokenizer, const std::string& whose, Unknown policy,
                      EvalTokens& out) {
  if (is_data_directory(a.data)) {
    out.prepared.emplace(PreparedData::open(a.data));
    check_tokenizer(*out.prepared, tokenizer, whose);
    const DataSplit split = a.split == "train" ? DataSplit::kTrain : DataSplit::kVal;
    if (out.prepared->size(split) == 0)
      throw Error(a.data + ": has no " + to_string(split) + " split (prepared with --val-fraction 0); pass --split train");
    out.tokens = TokenView(*out.prepared, split);
    return;
  }
  if (!a.split.empty()) throw Error("--split " + a.split + ": only for a data directory from potop prepare");
  const std::string text = read_utf8_text(a.data);
  // Characters the vocabulary lacks are counted first, so that the error names them all.
  out.encoded = tokenizer.encode(text, a.data, policy == Unknown::kError ? Unknown::kSkip : policy, &out.unknown);
  if (out.unknown.count > 0 && policy == Unknown::kError)
    throw Error(a.data + ": " + out.unknown.describe() + "; pass --unknown skip or --unknown replace to score the rest");
  out.tokens = TokenView(out.encoded);
}

}  // namespace potop
