#include "data/batch.h"

#include "core/error.h"

namespace potop {

Batch Batch::rows(int first, int count) const {
  POTOP_CHECK(first >= 0 && count >= 0 && first + count <= B, "rows outside the batch");
  Batch shard = *this;
  shard.B = count;
  const size_t offset = static_cast<size_t>(first) * T;
  shard.tokens = tokens ? tokens + offset : nullptr;
  shard.targets = targets ? targets + offset : nullptr;
  shard.source = source ? source + static_cast<size_t>(first) * S : nullptr;
  shard.source_lengths = source_lengths ? source_lengths + first : nullptr;
  shard.lengths = lengths ? lengths + first : nullptr;
  shard.labels = labels ? labels + first : nullptr;
  return shard;
}

}  // namespace potop
