// Picks the next token from a row of logits. In order:
//   1. penalties on the tokens of the recent context (llama.cpp's): --repeat-penalty divides a
//      positive logit by the penalty and multiplies a negative one, --presence-penalty subtracts
//      its value once per distinct token present;
//   2. temperature 0: the most likely token (deterministic); else
//   3. top-k, then softmax(logits / temperature), then top-p (nucleus), then min-p (drop tokens
//      whose probability is below min_p times the likeliest one's), and one draw.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/rng.h"

namespace potop {

struct SamplingOptions {
  float temperature = 0.8f;     // 0 = greedy (argmax), deterministic
  int top_k = 0;                // keep the k most likely tokens; 0 = all
  float top_p = 1.0f;           // keep the smallest set whose probability reaches p; 1 = all
  float min_p = 0.0f;           // keep tokens with probability >= min_p · the largest; 0 = all
  float repeat_penalty = 1.0f;  // 1 = off
  float presence_penalty = 0.0f;  // 0 = off
  int repeat_last_n = 64;       // how many recent tokens the penalties look at
};

// The first option out of range: its field's name as in the struct ("top_k") and what is wrong
// ("must be >= 0 (got -1); 0 disables it"); nullopt when every option is fine. The server names
// the JSON field, the command line the flag.
struct SamplingProblem {
  std::string field, message;
};
std::optional<SamplingProblem> find_problem(const SamplingOptions& options);

// Throws potop::Error naming the flag (--temperature, --top-k, --top-p, --min-p, ...) when out of range.
void validate(const SamplingOptions& options, int vocab_size);

class Sampler {
 public:
  Sampler(const SamplingOptions& options, uint64_t seed) : options_(options), rng_(seed) {}
  // recent: the context so far (the penalties read its last repeat_last_n tokens).
  int sample(const float* logits, int V, std::span<const int> recent = {});

 private:
  SamplingOptions options_;
  Rng rng_;
  std::vector<std::pair<float, int>> candidates_;  // reused: no allocation per token
  std::vector<float> penalised_;  // the logits after the penalties
  std::vector<char> seen_;        // tokens already penalised
};

}  // namespace potop
