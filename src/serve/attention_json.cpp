#include "serve/attention_json.h"

#include <cmath>

namespace potop::serve {

using nlohmann::json;

json attention_json(const SelfAttentionMaps& maps, const std::vector<int>& ids, int focus) {
  maps.run(ids);
  const int T = static_cast<int>(ids.size());
  json layers = json::array();
  for (int l = 0; l < maps.n_layer; ++l) {
    const float* att = maps.layer(l);
    json heads = json::array();
    for (int h = 0; h < maps.n_head; ++h) {
      json rows = json::array();
      for (int i = 0; i < T; ++i) {
        json row = json::array();
        const int keys = maps.causal ? i + 1 : T;
        for (int j = 0; j < keys; ++j)
          row.push_back(std::round(att[(static_cast<size_t>(h) * T + i) * T + j] * 1e5) / 1e5);
        rows.push_back(std::move(row));
      }
      heads.push_back(std::move(rows));
    }
    layers.push_back(std::move(heads));
  }
  json tokens = json::array();
  for (int id : ids) tokens.push_back(maps.label(id));
  return {{"tokens", tokens}, {"n_layer", maps.n_layer}, {"n_head", maps.n_head}, {"causal", maps.causal},
          {"focus", focus}, {"attention", layers}};
}

}  // namespace potop::serve
