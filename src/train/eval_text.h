// The tokens `potop eval` scores for a model of one token sequence (a language model's windows, a
// masked LM's masked rows): a text file encoded by the model's tokenizer, or a prepared data
// directory's split (data/prepared_data.h), read through its mapped shards.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/prepared_data.h"
#include "nn/model_kind.h"
#include "tokenizer/tokenizer.h"

namespace potop {

struct EvalTokens {
  UnknownReport unknown;
  std::vector<int> encoded;
  std::optional<PreparedData> prepared;
  TokenView tokens;
};

// request.data (and request.split) encoded by `tokenizer` with `policy` for characters its
// vocabulary lacks (kError: refused, naming them all); `whose` names the tokenizer in errors about
// a prepared directory's ("the model's tokenizer (DIR/best.safetensors)").
void read_eval_tokens(const EvalRequest& request, const Tokenizer& tokenizer, const std::string& whose, Unknown policy,
                      EvalTokens& out);

}  // namespace potop
