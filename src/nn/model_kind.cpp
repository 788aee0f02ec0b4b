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

std::string kind_nouns(const std::function<bool(const ModelKind&)>& which) {
  std::vector<std::string> nouns;
  for (const ModelKind* k : model_kinds())
    if (which(*k)) nouns.push_back(k->noun);
  std::string s;
  for (size_t i = 0; i < nouns.size(); ++i) s += (i == 0 ? "" : i + 1 == nouns.size() ? " or " : ", ") + nouns[i];
  return s;
}

std::string kind_nouns(Task task) {
  return kind_nouns([task](const ModelKind& k) { return k.can(task); });
}

Error wrong_kind(const std::string& where, const ModelKind& kind, const std::string& wanted) {
  return Error(where + ": " + kind.description + " (kind '" + kind.name + "'), not " + wanted + "; " + kind.hint);
}

}  // namespace potop
