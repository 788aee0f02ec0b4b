// The training data of either path, owning its storage, with a TokenView per split:
//   - the raw-text path: the text's ids in memory, split by split_tokens;
//   - a prepared data directory (`potop prepare`): memory-mapped shards, never read whole.
// The samplers (BatchSampler, fill_eval_batch) read both the same way.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "data/dataset.h"
#include "data/prepared_data.h"

namespace potop {

class TokenCorpus {
 public:
  // The raw-text path: takes the split's vectors.
  static TokenCorpus in_memory(TokenSplit split);
  // A prepared data directory, opened with PreparedData::open.
  static TokenCorpus prepared(PreparedData data);

  TokenView train() const { return train_; }
  TokenView val() const { return val_; }  // empty when there is no validation split

  // The prepared data, or null on the raw-text path.
  const PreparedData* prepared_data() const { return data_.get(); }

 private:
  TokenSplit split_;
  std::unique_ptr<PreparedData> data_;  // on the heap: the views point at it, the corpus may move
  TokenView train_, val_;
};

}  // namespace potop
