#include "checkpoint/weights.h"

#include <algorithm>
#include <cstring>
#include <map>
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
constexpr const char* kQuantizedKey = "potop.quantized";

// The tensors a file holds quantized, and in which type: {} for a file of floats.
std::map<std::string, QuantType> quantized_tensors(const Metadata& metadata, const std::string& path) {
  std::map<std::string, QuantType> out;
  const auto text = metadata.find(kQuantizedKey);
  if (text == metadata.end()) return out;
  const nlohmann::json j = nlohmann::json::parse(text->second, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw Error(path + ": metadata '" + kQuantizedKey + "' is not a JSON object");
  for (const auto& [name, type] : j.items()) {
    if (!type.is_string()) throw Error(path + ": metadata '" + kQuantizedKey + "': '" + name + "' is not a string");
    try {
      out[name] = parse_quant_type(type.get<std::string>(), name);
    } catch (const Error& e) {
      throw Error(path + ": metadata '" + kQuantizedKey + "': " + e.what());
    }
  }
  return out;
}
std::map<std::string, QuantType> quantized_tensors(const SafetensorsFile& file) {
  return quantized_tensors(file.metadata(), file.path());
}

// How a quantized matrix W (in K, out N) is stored: Wᵀ's N rows, as F16 values (N, K) or as the
// bytes of N rows of blocks (N, row bytes).
Dtype quantized_dtype(QuantType type) { return type == QuantType::kF16 ? Dtype::F16 : Dtype::U8; }
Shape quantized_shape(QuantType type, int N, int K) {
  return {N, type == QuantType::kF16 ? K : static_cast<int64_t>(quant_row_bytes(type, K))};
}

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

void require_tensor(const SafetensorsFile& file, const std::string& name, const Shape& shape, Dtype dtype = Dtype::F32,
                    const std::string& as = "") {
  const std::string& path = file.path();
  if (!file.has(name))
    throw Error(path + ": tensor '" + name + "' is missing (the checkpoint does not match config.json)");
  const SafetensorsInfo& info = file.info(name);
  if (info.dtype != dtype)
    throw Error(path + ": tensor '" + name + "' is " + dtype_name(info.dtype) + ", expected " + dtype_name(dtype) + as);
  if (info.shape != shape)
    throw Error(path + ": tensor '" + name + "' has shape " + shape_string(info.shape) + " in the file, but " +
                shape_string(shape) + " is expected" + as + " (the checkpoint does not match config.json)");
}

// Checks one tensor: F32 in the layout's shape, or quantized as the file's metadata says.
void require_spec(const SafetensorsFile& file, const TensorSpec& spec, const std::map<std::string, QuantType>& quantized) {
  const auto q = quantized.find(spec.name);
  if (q == quantized.end()) return require_tensor(file, spec.name, spec.shape);
  if (!spec.matrix) throw Error(file.path() + ": tensor '" + spec.name + "' is quantized, but it is not a matrix potop quantizes");
  const int K = static_cast<int>(spec.shape[0]), N = static_cast<int>(spec.shape[1]);
  if (!quant_row_fits(q->second, K))
    throw Error(file.path() + ": tensor '" + spec.name + "' is " + to_string(q->second) + ", but its " + std::to_string(K) +
                " inputs are not a multiple of " + std::to_string(kQuantBlock));
  require_tensor(file, spec.name, quantized_shape(q->second, N, K), quantized_dtype(q->second),
                 " for " + to_string(q->second));
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
  POTOP_CHECK(groups.empty() || !params.any_quantized(), "a training state holds no quantized weights");
  std::vector<SafetensorsEntry> entries;
  std::vector<std::vector<uint8_t>> as_rows;  // quantized matrices in the files' layout, while entries point at them
  nlohmann::json quantized = nlohmann::json::object();
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& spec = specs[i];
    if (const QuantizedMatrix* q = params.quantized(static_cast<ParamId>(i))) {
      const uint8_t* bytes = q->data.data();
      if (q->layout != QuantLayout::kRows) bytes = as_rows.emplace_back(q->rows_data()).data();
      entries.push_back({spec.name, quantized_dtype(q->type), quantized_shape(q->type, q->rows, q->cols), bytes});
      quantized[spec.name] = to_string(q->type);
    } else {
      entries.push_back({spec.name, Dtype::F32, spec.shape, params.values().at(spec)});
    }
  }
  if (!quantized.empty()) metadata[kQuantizedKey] = quantized.dump();
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
  const std::map<std::string, QuantType> quantized = quantized_tensors(file);
  for (const auto& [name, type] : quantized)
    if (!layout.find(name)) throw Error(file.path() + ": metadata '" + kQuantizedKey + "' names no tensor of the model: '" + name + "'");
  for (const TensorSpec& spec : layout.specs()) {
    require_spec(file, spec, quantized);
    expected.insert(spec.name);
    for (const std::string& prefix : groups) expected.insert(prefix + spec.name);
  }
  for (const std::string& name : file.names())
    if (!expected.count(name))
      throw Error(file.path() + ": unexpected tensor '" + name + "' (the checkpoint does not match config.json)");
}

void load_weights(const SafetensorsFile& file, ParameterSet& params) {
  check_weights(file, params.layout());
  const std::map<std::string, QuantType> quantized = quantized_tensors(file);
  const auto& specs = params.layout().specs();
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& spec = specs[i];
    const auto q = quantized.find(spec.name);
    if (q == quantized.end()) {
      file.copy_f32_into(spec.name, params.values().at(spec), spec.shape);
      file.release(spec.name);  // a mapped file: its pages are not needed twice
      continue;
    }
    QuantizedMatrix m{q->second, static_cast<int>(spec.shape[1]), static_cast<int>(spec.shape[0]), QuantLayout::kRows, {}};
    const std::span<const std::byte> bytes = file.bytes(spec.name);
    m.data.resize(bytes.size());
    std::memcpy(m.data.data(), bytes.data(), bytes.size());
    file.release(spec.name);
    params.set_quantized(static_cast<ParamId>(i), std::move(m));
  }
  // The output tables' copies are not in the file: made from its float tables, as quantize made them.
  if (!quantized.empty()) params.quantize_output_tables(quantized.begin()->second);
}

std::string read_quantization(const Metadata& metadata, const std::string& path) {
  std::vector<QuantType> types;
  for (const auto& [name, type] : quantized_tensors(metadata, path)) types.push_back(type);
  return quant_types_name(types);
}

void refuse_quantized(const Metadata& metadata, const std::string& where, const std::string& what) {
  const auto it = metadata.find(kQuantizedKey);
  if (it == metadata.end()) return;
  throw Error(where + ": is a quantized model, for inference only; " + what +
              " needs its float weights (use the model it was quantized from)");
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
