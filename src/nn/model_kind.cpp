#include "nn/model_kind.h"

#include <algorithm>

namespace potop {

const ModelKind& model_kind(const std::string& name) {
  std::string known;
  for (const ModelKind* kind : model_kinds()) {
    if (kind->name == name) return *kind;
    known += (known.empty() ? "" : ", ") + kind->name;
  }
  throw Error("unknown model kind '" + name + "' (known: " + known + ")");
}

bool ModelKind::can(Task task) const { return std::find(tasks.begin(), tasks.end(), task) != tasks.end(); }

int expected_vocab_size(const ModelKind& kind, const nlohmann::json& config, int tokenizer_size) {
  return tokenizer_size + (kind.extra_ids ? kind.extra_ids(config) : 0);
}

Error wrong_kind(const std::string& where, const ModelKind& kind, const std::string& wanted) {
  return Error(where + ": " + kind.description + " (kind '" + kind.name + "'), not " + wanted + "; " + kind.hint);
}

}  // namespace potop
