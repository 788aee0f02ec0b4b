// The table of model kinds: one row per model that has a model directory (config.json "kind"),
// so that one loader (checkpoint/model_dir.h) and the commands that take any model (info, eval,
// attention) handle every kind the same way, as llama.cpp's architecture table lets one loader
// serve every architecture. Each model folder writes its own row (models/gpt/gpt_kind.cpp,
// ...); kinds.cpp lists them. Adding a model is a folder and one row.
//
// Configs travel as JSON between the table and its users: the row parses it into its typed
// config (GPTConfig, BowConfig, ...) and back, so the loader needs no model's header.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "nn/model.h"
#include "nn/parameters.h"

namespace potop {

struct ModelKind {
  std::string name;         // config.json's "kind": "gpt", "bow", "encoder-decoder"
  std::string description;  // one line: "decoder-only Transformer language model (GPT)"
  std::string noun;         // how an error calls it: "a GPT", "a translation model"
  std::string tokenizer;    // the tokenizer a config.json without "tokenizer" means
  std::vector<std::string> commands;  // the potop commands that take it: "sample", "eval", ...
  std::string hint;         // where to go for the others: "use potop translate"
  std::string trainer;      // the command that trains it, and resumes its runs: "potop translate train"

  // The config from JSON (fields absent keep their defaults), validated and written back with
  // every field: the normalized config the other functions take. Errors name `source`.
  std::function<nlohmann::json(const nlohmann::json& config, const std::string& source)> normalize = {};
  std::function<Layout(const nlohmann::json& config)> parameter_layout = {};
  std::function<std::unique_ptr<Model>(const nlohmann::json& config)> make = {};  // parameters zero
  std::function<std::string(const nlohmann::json& config)> describe = {};  // a line for potop info
  // Ids the model has past its tokenizer's vocabulary (BERT's [MASK], T5's sentinels), so that
  // vocab_size = tokenizer size + extra_ids(config); null: none.
  std::function<int(const nlohmann::json& config)> extra_ids = {};
};

// Every kind, in the order `potop info` and errors list them.
const std::vector<const ModelKind*>& model_kinds();
// The kind of this name; an unknown name is an Error listing the known ones.
const ModelKind& model_kind(const std::string& name);

// "<where>: <description> (kind '<name>'), not <wanted>; <hint>": a command given a model of a
// kind it cannot use, told which command takes it.
Error wrong_kind(const std::string& where, const ModelKind& kind, const std::string& wanted);

// A row for a model class M with config Config: `row` with normalize, parameter_layout and make
// filled in from what every model of potop offers (update_from_json, validate, to_json,
// M::parameter_layout, M(config)).
template <class M, class Config>
ModelKind model_kind_row(ModelKind row) {
  auto parse = [](const nlohmann::json& j, const std::string& source) {
    Config config;
    update_from_json(config, j, source);
    config.validate(source);
    return config;
  };
  row.normalize = [parse](const nlohmann::json& j, const std::string& source) { return to_json(parse(j, source)); };
  row.parameter_layout = [parse](const nlohmann::json& j) { return M::parameter_layout(parse(j, "config")); };
  row.make = [parse](const nlohmann::json& j) -> std::unique_ptr<Model> {
    return std::make_unique<M>(parse(j, "config"));
  };
  return row;
}

// The vocab_size a model of this kind and config has with a tokenizer of tokenizer_size tokens.
int expected_vocab_size(const ModelKind& kind, const nlohmann::json& config, int tokenizer_size);

// The typed config of a normalized JSON config (a row's normalize output).
template <class Config>
Config config_from_json(const nlohmann::json& j, const std::string& source = "config") {
  Config config;
  update_from_json(config, j, source);
  return config;
}

}  // namespace potop
