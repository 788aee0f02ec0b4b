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

}  // namespace potop::serve
