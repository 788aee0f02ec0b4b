// The shape of a decoder-only GPT and its architectural switches. One struct, validated in
// one place, serialised to and from JSON (config.json in a model directory).
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace potop {

enum class NormPlacement { kPre, kPost };            // GPT-2 pre-LN, or "Add & Norm" post-LN
enum class Activation { kGelu, kRelu };              // feed-forward non-linearity
enum class PositionEncoding { kLearned, kSinusoidal };  // wpe table, or the fixed sin/cos table

struct GPTConfig {
  int vocab_size = 0;
  int block_size = 64;  // maximum context length T
  int n_layer = 4;
  int n_head = 4;
  int n_embd = 128;      // C; head size is n_embd / n_head
  float dropout = 0.0f;  // after embeddings, on attention probabilities, after each projection
  bool bias = true;      // biases in linear layers and LayerNorms
  NormPlacement norm = NormPlacement::kPre;
  Activation activation = Activation::kGelu;
  PositionEncoding positions = PositionEncoding::kLearned;

  int head_size() const { return n_embd / n_head; }
  // Throws potop::Error "<source>: <field> <what is wrong>".
  void validate(const std::string& source = "config") const;
};

std::string to_string(NormPlacement v);
std::string to_string(Activation v);
std::string to_string(PositionEncoding v);
NormPlacement parse_norm(const std::string& s, const std::string& field);
Activation parse_activation(const std::string& s, const std::string& field);
PositionEncoding parse_positions(const std::string& s, const std::string& field);

nlohmann::json to_json(const GPTConfig& config);
// Reads the fields present in j into config (others keep their values); rejects unknown
// fields and wrong types with an Error naming `source` and the field.
void update_from_json(GPTConfig& config, const nlohmann::json& j, const std::string& source);

}  // namespace potop
