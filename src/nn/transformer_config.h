// The shape of a Transformer body (the layers of nn/: widths, heads, norm placement, activation,
// positions) that every model built on it shares: the GPT's config, a BERT's, a classifier's body.
// One struct, one field list (transformer_fields) that drives its JSON (config.json,
// checkpoints), the trainers' flags and their help, and one validate().
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"

namespace potop {

enum class NormPlacement { kPre, kPost };               // GPT-2 pre-LN, or "Add & Norm" post-LN
enum class NormKind { kLayerNorm, kRms };               // LayerNorm, or RMSNorm (Llama's)
// Feed-forward non-linearity: GELU's tanh form (GPT-2's), ReLU, the exact GELU with erf (BERT's),
// or SwiGLU, a gated unit (Llama's: nn/mlp_layer.h).
enum class Activation { kGelu, kRelu, kGeluErf, kSwiGlu };
// A wpe table, the fixed sin/cos table, or none at the input: Q and K rotated (RoPE, Llama's).
enum class PositionEncoding { kLearned, kSinusoidal, kRotary };

struct TransformerConfig {
  int vocab_size = 0;
  int block_size = 64;  // maximum context length T
  int n_layer = 4;
  int n_head = 4;
  int n_embd = 128;      // C; head size is n_embd / n_head
  float dropout = 0.0f;  // after embeddings, on attention probabilities, after each sub-layer
  bool bias = true;      // biases in linear layers and LayerNorms
  NormPlacement norm = NormPlacement::kPre;
  Activation activation = Activation::kGelu;
  PositionEncoding positions = PositionEncoding::kLearned;
  float norm_eps = 1e-5f;  // the LayerNorms' eps (GPT-2's; BERT's is 1e-12)
  // BERT's embeddings (nn/embedding_layer.h): a segment table of this many rows (0: none), and a
  // LayerNorm after the embedding sum.
  int token_types = 0;
  bool embedding_norm = false;
  // BERT's masked-LM head (models/bert/bert.h): a transform, dense + activation + LayerNorm,
  // before the tied decoder (Hugging Face's BertPredictionHeadTransform); and [MASK] the
  // tokenizer's own token (an imported BERT's 103) rather than the id after its vocabulary.
  bool mlm_transform = false;
  bool mask_in_vocab = false;

  int head_size() const { return n_embd / n_head; }
  // Throws potop::Error "<source>: <field> <what is wrong>".
  void validate(const std::string& source = "config") const;
};

// Every field but vocab_size (which comes from the tokenizer, not from the user), in the order
// of `potop train --help`. The fields marked `shape` fix the tensors' names and sizes.
std::vector<Field> transformer_fields(TransformerConfig& config);

// "4 layers, 4 heads, 128 wide, block 64, pre-LN, gelu, learned positions", then what differs
// from GPT-2's defaults (", LayerNorm eps 1e-12, 2 segment rows, embedding LayerNorm"): for potop info.
std::string describe_shape(const TransformerConfig& c);

std::string to_string(NormPlacement v);
std::string to_string(Activation v);
std::string to_string(PositionEncoding v);

nlohmann::json to_json(const TransformerConfig& config);
// Reads the fields present in j into config (others keep their values); rejects unknown
// fields and wrong types with an Error naming `source` and the field.
void update_from_json(TransformerConfig& config, const nlohmann::json& j, const std::string& source);

}  // namespace potop
