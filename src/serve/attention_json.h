// /v1/attention's answer for any model with self-attention: the tokens of a text as the model
// reads them, and every layer's and head's weights.
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "report/attention_map.h"

namespace potop::serve {

// Runs maps.run(ids) and returns {"tokens", "n_layer", "n_head", "causal", "focus", "attention":
// layers × heads × T rows}. A causal model's row i stops at the diagonal (keys after the query
// get no weight); an encoder's rows hold all T keys. `focus` is the query the model's output is
// read from (the studio selects it first).
nlohmann::json attention_json(const SelfAttentionMaps& maps, const std::vector<int>& ids, int focus);

// The same for a causal model and a text longer than its block: read through generation's
// sliding window (generate/generator.h), row i holds the weights of the window it was read in
// (the block_size/2 to block_size keys before it), and 0 for the keys before that window.
nlohmann::json windowed_attention_json(const SelfAttentionMaps& maps, const std::vector<int>& ids, int focus);

}  // namespace potop::serve
