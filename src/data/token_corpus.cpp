#include "data/token_corpus.h"

namespace potop {

TokenCorpus TokenCorpus::in_memory(TokenSplit split) {
  TokenCorpus c;
  c.split_ = std::move(split);  // a moved vector keeps its buffer, so views of it stay valid
  c.train_ = TokenView(c.split_.train);
  c.val_ = TokenView(c.split_.val);
  return c;
}

TokenCorpus TokenCorpus::prepared(PreparedData data) {
  TokenCorpus c;
  c.data_ = std::make_unique<PreparedData>(std::move(data));
  c.train_ = TokenView(*c.data_, DataSplit::kTrain);
  c.val_ = TokenView(*c.data_, DataSplit::kVal);
  return c;
}

}  // namespace potop
