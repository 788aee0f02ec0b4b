#include "checkpoint/weights.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/hash.h"

namespace potop {

namespace {

constexpr const char* kModelKey = "potop.model";
constexpr const char* kConfigKey = "potop.config";
constexpr const char* kTokenizerKey = "potop.tokenizer";
constexpr const char* kVocabHashKey = "potop.vocab_hash";
constexpr const char* kGroupsKey = "potop.tensor_groups";
constexpr const char* kStateKind = "train_state";

// The group prefixes a file declares. A training state written before potop.tensor_groups
// existed (state version 1) holds AdamW's moments.
std::vector<std::string> declared_groups(const SafetensorsFile& file) {
  std::vector<std::string> prefixes;
  if (const auto list = file.metadata_value(kGroupsKey)) {
    size_t begin = 0;
    while (begin < list->size()) {
      const size_t comma = std::min(list->find(',', begin), list->size());
      if (comma > begin) prefixes.push_back(list->substr(begin, comma - begin));
      begin = comma + 1;
    }
  } else if (file.metadata_value("potop.kind") == std::optional<std::string>(kStateKind)) {
    prefixes = {"adamw.m.", "adamw.v."};
  }
  return prefixes;
}

void require_tensor(const SafetensorsFile& file, const std::string& name, const Shape& shape) {
  const std::string& path = file.path();
  if (!file.has(name))
    throw Error(path + ": tensor '" + name + "' is missing (the checkpoint does not match config.json)");
  const SafetensorsInfo& info = file.info(name);
  if (info.dtype != Dtype::F32)
    throw Error(path + ": tensor '" + name + "' is " + dtype_name(info.dtype) + ", expected F32");
  if (info.shape != shape)
    throw Error(path + ": tensor '" + name + "' has shape " + shape_string(info.shape) + " in the file, but " +
                shape_string(shape) + " is expected (the checkpoint does not match config.json)");
}

}  // namespace

void save_weights(const fs::path& path, const ParameterSet& params, const ModelHeader& header, Metadata metadata,
                  const std::vector<TensorGroup>& groups) {
  POTOP_CHECK(header.tokenizer != nullptr, "a checkpoint needs its tokenizer");
  const auto& specs = params.layout().specs();
  std::vector<std::string> names;  // keeps the groups' names alive while the entries point at them
  names.reserve(groups.size() * specs.size());
  for (const TensorGroup& g : groups)
    for (const TensorSpec& spec : specs) names.push_back(g.prefix + spec.name);
  std::vector<SafetensorsEntry> entries;
  for (const TensorSpec& spec : specs) entries.push_back({spec.name, Dtype::F32, spec.shape, params.values().at(spec)});
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t i = 0; i < specs.size(); ++i)
      entries.push_back({names[g * specs.size() + i], Dtype::F32, specs[i].shape, groups[g].arena->at(specs[i])});
  metadata[kModelKey] = header.kind;
  metadata[kConfigKey] = header.config.dump();
  metadata[kTokenizerKey] = header.tokenizer->to_json().dump();
  metadata[kVocabHashKey] = hash_hex(header.tokenizer->hash());
  if (!groups.empty()) {
    std::string list;
    for (const TensorGroup& g : groups) list += (list.empty() ? "" : ",") + g.prefix;
    metadata[kGroupsKey] = list;
  }
  metadata["format"] = "pt";  // what Hugging Face's loaders expect of GPT-2 weights
  write_safetensors(path, entries, metadata);
}

void check_weights(const SafetensorsFile& file, const Layout& layout) {
  std::set<std::string> expected;
  const std::vector<std::string> groups = declared_groups(file);
  for (const TensorSpec& spec : layout.specs()) {
    require_tensor(file, spec.name, spec.shape);
    expected.insert(spec.name);
    for (const std::string& prefix : groups) expected.insert(prefix + spec.name);
  }
  for (const std::string& name : file.names())
    if (!expected.count(name))
      throw Error(file.path() + ": unexpected tensor '" + name + "' (the checkpoint does not match config.json)");
}

void load_weights(const SafetensorsFile& file, ParameterSet& params) {
  check_weights(file, params.layout());
  for (const TensorSpec& spec : params.layout().specs())
    file.copy_f32_into(spec.name, params.values().at(spec), spec.shape);
}

void load_group_tensors(const SafetensorsFile& file, const Layout& layout, const std::vector<TensorGroup>& groups) {
  for (const TensorGroup& g : groups)
    for (const TensorSpec& spec : layout.specs()) {
      const std::string name = g.prefix + spec.name;
      if (!file.has(name))
        throw Error(file.path() + ": tensor '" + name + "' is missing (the state does not match the model)");
      file.copy_f32_into(name, g.arena->at(spec), spec.shape);
    }
}

std::string read_model_kind(const SafetensorsFile& file) { return file.metadata_value(kModelKey).value_or(""); }

nlohmann::json read_model_config(const SafetensorsFile& file) {
  const auto text = file.metadata_value(kConfigKey);
  if (!text) return nullptr;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw Error(file.path() + ": metadata '" + kConfigKey + "' is not a JSON object");
  return j;
}

std::unique_ptr<Tokenizer> read_tokenizer(const SafetensorsFile& file) {
  const auto text = file.metadata_value(kTokenizerKey);
  if (!text) return nullptr;
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(file.path() + ": metadata '" + kTokenizerKey + "' is not valid JSON");
  return tokenizer_from_json(j, file.path() + ": " + kTokenizerKey);
}

std::string read_vocab_hash(const SafetensorsFile& file) { return file.metadata_value(kVocabHashKey).value_or(""); }

}  // namespace potop
