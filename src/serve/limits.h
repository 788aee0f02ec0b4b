// What one request may ask of the server, so that no client starves the others. Every value is
// a flag of `potop serve` (cmd_serve.cpp), with these defaults.
#pragma once
#include <cstddef>

namespace potop::serve {

struct Limits {
  size_t max_body_bytes = 1 << 20;  // a larger request body gets 413
  int max_tokens = 2048;            // most tokens one completion may ask for
  int default_max_tokens = 16;      // when the request gives none (OpenAI's default)
  int max_prompt_tokens = 8192;     // longer prompts get 400
  double timeout_s = 120;           // a generation running longer ends (finish_reason "length")
  int max_logprobs = 20;            // most alternatives per token in top_logprobs
  int max_attention_tokens = 256;   // longest text /v1/attention takes (and never above block_size)
};

}  // namespace potop::serve
