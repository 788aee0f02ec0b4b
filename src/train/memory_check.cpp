#include "train/memory_check.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "core/error.h"
#include "model/gpt.h"

namespace potop {

namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

double estimated_training_bytes(const GPTConfig& c, int B, int T, int replicas) {
  const double R = double(B) * T, C = c.n_embd, H = c.n_head, V = c.vocab_size, L = c.n_layer;
  // Parameters, from the layout (shapes only, nothing allocated): params, m, v, and one
  // gradient copy per replica.
  const double params = static_cast<double>(gpt_parameter_layout(c).total_floats());
  const double per_layer = R * (18 * C + 4) + double(B) * H * T * T;  // GPT::reserve's block buffers
  const double acts = R * C + L * per_layer + R * (C + 2) + 2 * R * V + R;
  const double scratch = R * (14 * C + 1);
  return 4.0 * ((3 + replicas) * params + acts + scratch);
}

void check_training_fits(const GPTConfig& c, int B, int T, int replicas) {
  const double limit = 2147483647.0;  // elements in one activation tensor
  const double R = double(B) * T;
  auto require = [&](double elements, const std::string& what) {
    if (elements > limit) {
      char count[32];
      std::snprintf(count, sizeof count, "%.3g", elements);
      throw Error(what + " would hold " + count +
                  " values, over potop's limit of 2^31 per tensor; use a smaller --batch-size or --block-size");
    }
  };
  require(R * 4 * c.n_embd, "the feed-forward activations (--batch-size × --block-size × 4·--n-embd)");
  require(double(B) * c.n_head * T * T, "the attention scores (--batch-size × --n-head × --block-size²)");
  require(R * c.vocab_size, "the logits (--batch-size × --block-size × vocabulary " + std::to_string(c.vocab_size) + ")");
  require(double(c.vocab_size) * c.n_embd, "the token embedding (vocabulary × --n-embd)");
  require(4.0 * c.n_embd * c.n_embd, "a feed-forward weight (4·--n-embd²)");

  const double need = estimated_training_bytes(c, B, T, replicas), have = physical_memory_bytes();
  if (have > 0 && need > have)
    throw Error("this model needs about " + gib(need) + " of memory to train but the machine has " + gib(have) +
                "; use a smaller --batch-size, --block-size, --n-embd or --n-layer" +
                (replicas > 1 ? ", or fewer --threads (each keeps its own gradients)" : ""));
}

}  // namespace potop
