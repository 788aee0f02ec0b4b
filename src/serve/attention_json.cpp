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
  return {{"tokens", tokens}, {"n_layer", maps.n_layer}, {"n_head", maps.n_head}, {"n_kv_head", maps.n_kv_head},
          {"causal", maps.causal},
          {"focus", focus}, {"attention", layers}};
}

json windowed_attention_json(const SelfAttentionMaps& maps, const std::vector<int>& ids, int focus) {
  const int T = static_cast<int>(ids.size()), block = maps.block_size;
  if (T <= block || !maps.causal) return attention_json(maps, ids, focus);
  // rows[l][h][i]: row i of the window it was first read in, as absolute keys 0..i.
  std::vector<std::vector<std::vector<std::vector<double>>>> rows(
      size_t(maps.n_layer), std::vector<std::vector<std::vector<double>>>(size_t(maps.n_head),
                                                                          std::vector<std::vector<double>>(size_t(T))));
  int start = 0, end = block, done = 0;
  for (;;) {
    const std::vector<int> window(ids.begin() + start, ids.begin() + end);
    maps.run(window);
    const int W = end - start;
    for (int l = 0; l < maps.n_layer; ++l) {
      const float* att = maps.layer(l);
      for (int h = 0; h < maps.n_head; ++h)
        for (int i = done; i < end; ++i) {
          std::vector<double>& row = rows[size_t(l)][size_t(h)][size_t(i)];
          row.assign(size_t(i) + 1, 0.0);
          for (int j = start; j <= i; ++j)
            row[size_t(j)] = std::round(att[(static_cast<size_t>(h) * W + (i - start)) * W + (j - start)] * 1e5) / 1e5;
        }
    }
    done = end;
    if (end == T) break;
    start = end - std::max(1, block / 2);  // as the generator slides: keep the last half
    end = std::min(T, start + block);
  }
  json tokens = json::array();
  for (int id : ids) tokens.push_back(maps.label(id));
  return {{"tokens", tokens}, {"n_layer", maps.n_layer}, {"n_head", maps.n_head}, {"n_kv_head", maps.n_kv_head},
          {"causal", true}, {"focus", focus},
          {"window", block}, {"attention", rows}};
}

}  // namespace potop::serve
