// The table of model kinds: one row per model that has a model directory (config.json "kind"),
// so that one loader (checkpoint/model_dir.h) and the commands that take any model (info, eval,
// attention, serve) handle every kind the same way, as llama.cpp's architecture table lets one
// loader serve every architecture. Each model folder writes its own row (models/gpt/gpt_kind.cpp,
// ...), with the tasks its model can do (nn/tasks.h); models/kinds.cpp lists the rows and
// defines model_kinds(). This header is the row's type, below every layer that reads the table:
// the loader, the run kit and the commands every model shares see rows, never a model's class.
// Adding a model is a folder and one row.
//
// Configs travel as JSON between the table and its users: the row parses it into its typed
// config (GPTConfig, BowConfig, ...) and back, so the loader needs no model's header.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "nn/foreign_model.h"
#include "nn/model.h"
#include "nn/parameters.h"
#include "nn/tasks.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// potop export: a model written in another program's format.
struct ExportRequest {
  std::string type;  // gguf: the weight matrices' type, f32, f16 or q8_0 (checked by the command)
  std::string name;  // gguf: general.name
  std::string out;   // the file (gguf) or the new directory (hf) to write
  std::string chat_template;  // the model's Jinja chat template (config.json's), carried along; empty: none
};
struct ExportResult {
  std::vector<std::string> notes;  // lines for the user: fallbacks, what the other program does differently
  std::string summary;             // what was written: "llama.cpp gpt2, f16 weights, 28 tensors, 1.2 MB"
};
// potop eval: what the command was told (checked by it), for a kind whose scoring is its own.
struct EvalRequest {
  std::string model;    // -m as given, for messages and a translation model's default test.tsv
  std::string data;     // the file (or prepared data directory) to score; may be empty
  std::string split;    // prepared data: "val" (default) or "train"
  std::string columns;  // sentence pairs: the languages of the file's columns
  Unknown unknown = Unknown::kError;
  bool unknown_given = false;
  int batch_size = 16, stride = 0;
  double mask_fraction = 0.15;  // a masked LM's
  uint64_t seed = 1;            // a masked LM's masks
  std::function<void()> announce = {};  // prints which checkpoint was loaded, once the input is checked
};
struct EvalResult {
  nlohmann::json json;  // what --json prints
  std::string text;     // what is printed without it
};
struct LoadedModel;  // checkpoint/model_dir.h

// potop import: a Hugging Face directory's or a GGUF file's model as one of potop's (nn/foreign_model.h).
using Importer = std::function<ImportedModel(const ImportRequest& request)>;
using ExportWriter = std::function<ExportResult(const Model& model, const Tokenizer& tokenizer, const ExportRequest& request)>;

struct ModelKind {
  std::string name;         // config.json's "kind": "gpt", "bow", "encoder-decoder"
  std::string description;  // one line: "decoder-only Transformer language model (GPT)"
  std::string noun;         // how an error calls it: "a GPT", "a translation model"
  std::string tokenizer;    // the tokenizer a config.json without "tokenizer" means
  std::vector<Task> tasks;  // what its model can do (nn/tasks.h): the interfaces its class implements
  std::vector<std::string> commands;  // for potop info: the potop commands that take it: "sample", "eval", ...
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
  // A causal LM's KV cache, per token of context, for potop info: its bytes and how they come
  // about ("2 layers × K,V × 4 heads × 16 floats"); null: no KV cache.
  std::function<std::pair<double, std::string>(const nlohmann::json& config)> kv_cache_per_token = {};
  // How `potop eval` treats text its vocabulary lacks by default: as its trainer did (a
  // bag-of-words LM learned <unk> for the words it lacks; the others refuse them).
  Unknown scored_unknown = Unknown::kError;
  // potop eval of a kind whose scoring is its own (a translation model's sentence pairs, a masked
  // LM's masked tokens), in its folder; null: a language model's windows of a text.
  std::function<EvalResult(LoadedModel& model, const EvalRequest& request)> evaluate = {};
  // Its model is a Transformer body (nn/transformer_body.h, under GPT-2's names) with a head: a
  // classifier can start from that body (classify train --init-from), causal when the model is
  // a causal LM.
  bool lends_body = false;
  // potop export --format gguf / hf: the writers of other programs' formats, which live in the
  // model's folder (its tensor names there), as llama.cpp keeps one table per architecture; null
  // when the kind has none.
  ExportWriter export_gguf = {}, export_hf = {};
  // potop import: the Hugging Face architectures (config.json's "architectures") this kind reads,
  // and its importer, in the model's folder beside its export; empty when it reads none. The same
  // for GGUF files: the general.architecture it reads ("gpt2", "llama"), and that importer.
  std::vector<std::string> hf_architectures = {};
  Importer import_hf = {};
  std::string gguf_architecture = {};
  Importer import_gguf = {};

  bool can(Task task) const;
};

// Every kind, in the order `potop info` and errors list them (models/kinds.cpp).
const std::vector<const ModelKind*>& model_kinds();
// The kind of this name; an unknown name is an Error listing the known ones.
const ModelKind& model_kind(const std::string& name);

// The nouns of the kinds `which` takes, in the table's order: "a GPT or a Llama" — what a message
// says a command wants, read from the table rather than spelled by the command.
std::string kind_nouns(const std::function<bool(const ModelKind&)>& which);
std::string kind_nouns(Task task);  // the kinds that can do the task

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
