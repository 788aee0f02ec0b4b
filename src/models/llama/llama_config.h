// The shape of a Llama-style decoder (llama.h): one struct, one field list (llama_fields) for its
// JSON (config.json, checkpoints), the `potop train --arch llama` flags and their help, and one
// validate(). Names follow Hugging Face's LlamaConfig where they have one there.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"
#include "nn/body_config.h"

namespace potop {

struct LlamaConfig {
  int vocab_size = 0;
  int block_size = 64;    // maximum context length T (max_position_embeddings)
  int n_layer = 4;        // num_hidden_layers
  int n_head = 4;         // num_attention_heads
  int n_kv_head = 0;      // num_key_value_heads: 1 (multi-query) .. n_head (multi-head); 0: n_head
  int n_embd = 128;       // C, hidden_size; the head size n_embd / n_head is even (rotary pairs)
  int ffn_hidden = 0;     // F, intermediate_size; 0: 8/3 · C rounded up to a multiple of 32
  float rope_theta = 10000.0f;
  float norm_eps = 1e-5f;  // rms_norm_eps
  bool tie_embeddings = true;  // the output head reads the token embedding (tie_word_embeddings)
  float dropout = 0.0f;   // on attention probabilities and on each sub-layer's output

  int head_size() const { return n_embd / n_head; }
  // With the defaults (0) made explicit: what a model is built from and saved with.
  LlamaConfig resolved() const;
  // Throws potop::Error "<source>: <field> <what is wrong>"; for a resolved config. With an empty
  // source the message names the flag instead: "--n-kv-head <what is wrong>".
  void validate(const std::string& source = "config") const;
};

// SwiGLU's hidden size for width C at the same parameter count as a 4C GELU MLP: 8/3 · C,
// rounded up to a multiple of 32.
int default_ffn_hidden(int n_embd);

// The decoder's switches and Hugging Face Llama's names for a config, validated (throws an Error
// naming the field).
BodyConfig llama_body(const LlamaConfig& config);

// Every field but vocab_size, in the order of `potop train --help`. The fields marked `shape`
// fix the tensors' names and sizes.
std::vector<Field> llama_fields(LlamaConfig& config);
nlohmann::json to_json(const LlamaConfig& config);
// Reads the fields present in j (others keep their values), then resolves the defaults; unknown
// fields and wrong types are an Error naming `source` and the field.
void update_from_json(LlamaConfig& config, const nlohmann::json& j, const std::string& source);

}  // namespace potop
