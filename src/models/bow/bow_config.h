// The shape of the bigram + attention bag-of-words language model (model/bow.h): one struct, one
// field list (bow_fields) for its JSON (config.json, checkpoints), the `potop bow train` flags
// and their help, and one validate().
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"

namespace potop {

// How the bag A_i of earlier words is weighted (docs/bow.md):
//   none      no bag: the plain bigram y = softmax(C·E(w_{i-1}) + c)
//   mean      uniform weights over the earlier words
//   idf       weights ∝ IDF(w_k), fixed from the training text's document frequencies
//   dot       softmax_k of E(w_k)·E(w_{i-1}) / √d
//   additive  softmax_k of v·tanh(W[E(w_k); E(w_{i-1})] + b)   (Bahdanau)
enum class BowAttention { kNone, kMean, kIdf, kDot, kAdditive };

struct BowConfig {
  int vocab_size = 0;
  int block_size = 32;  // the context window: T words per row
  int n_embd = 64;      // d, the word vectors' width
  int attn_hidden = 64; // additive scoring: the width of W's output (and of v)
  BowAttention attention = BowAttention::kDot;

  bool has_bag() const { return attention != BowAttention::kNone; }
  int features() const { return has_bag() ? 2 * n_embd : n_embd; }  // [E(w_{i-1}); A_i] or E(w_{i-1})
  // Throws potop::Error "<source>: <field> <what is wrong>".
  void validate(const std::string& source = "config") const;
};

Choice bow_attention_choice(BowAttention& value);  // "none", "mean", "idf", "dot", "additive"
std::string to_string(BowAttention v);
// Every field but vocab_size, in the order of `potop bow train --help`; all are shape fields.
std::vector<Field> bow_fields(BowConfig& config);
nlohmann::json to_json(const BowConfig& config);
// Reads the fields present in j (others keep their values); unknown fields and wrong types are
// an Error naming `source` and the field.
void update_from_json(BowConfig& config, const nlohmann::json& j, const std::string& source);

}  // namespace potop
