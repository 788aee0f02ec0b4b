// The model config of a fine-tuning run (--init-from): the base model's. A shape flag given with
// another value is refused — the weights could not be used — and the others (dropout, label
// smoothing: not part of the shape) are the run's own when given. Written for any config with a
// field list: `potop train --init-from` (the GPT) and `translate train --init-from` use it.
#pragma once
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/fields.h"

namespace potop {

template <class Config>
Config fine_tuned_config(const Config& base, const Config& requested, const std::vector<std::string>& given,
                         const std::string& init_from, std::vector<Field> (*fields)(Config&)) {
  Config config = base, want = requested;
  const std::vector<Field> have = fields(config), asked = fields(want);
  const nlohmann::json a = fields_to_json(have), b = fields_to_json(asked);
  std::string refused;
  for (size_t i = 0; i < have.size(); ++i) {
    if (std::find(given.begin(), given.end(), have[i].name) == given.end()) continue;
    const std::string key = have[i].json_key();
    if (have[i].shape && a[key] != b[key])
      refused += (refused.empty() ? "" : ", ") +
                 ("--" + have[i].name + " " + b[key].dump() + " (the model has " + a[key].dump() + ")");
    else
      copy_value(asked[i], have[i]);
  }
  if (!refused.empty())
    throw Error("--init-from " + init_from + ": cannot change " + refused +
                ": fine-tuning keeps the model's shape; drop the flag");
  return config;
}

}  // namespace potop
