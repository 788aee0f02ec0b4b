// potop import: a model another program wrote (a Hugging Face directory), as its config and its
// named tensors, and what a model folder's importer (ModelKind::import_hf, nn/model_kind.h) makes
// of it. The reader of the files lives in checkpoint/hf_import.h; the names and shapes of each
// architecture live in its model's folder (models/gpt/gpt_hf_import.cpp, ...), beside its export.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "nn/model.h"
#include "nn/parameters.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// Named tensors of another program's files, read as float32 whatever their stored type.
class ForeignTensors {
 public:
  virtual ~ForeignTensors() = default;
  virtual std::vector<std::string> names() const = 0;
  virtual bool has(const std::string& name) const = 0;
  // Error naming the files when absent.
  virtual Shape shape(const std::string& name) const = 0;
  // The tensor's values, converted to float32 (from F32, F16 or BF16; another type is an Error
  // naming the file, the tensor and its type), into dst of shape_numel(shape(name)) floats.
  // The source's memory for it is given back afterwards: each tensor is read once.
  virtual void read(const std::string& name, float* dst) const = 0;
  // The file holding it, for errors: "DIR/model-00001-of-00002.safetensors".
  virtual std::string file_of(const std::string& name) const = 0;
};

// A config.json's fields, read with errors that name the file and the field.
class ForeignConfig {
 public:
  ForeignConfig(const nlohmann::json& j, std::string file) : j_(j), file_(std::move(file)) {}
  bool has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  int integer(const std::string& key) const;  // required: absent is an Error
  int integer(const std::string& key, int fallback) const { return has(key) ? integer(key) : fallback; }
  double number(const std::string& key) const;
  double number(const std::string& key, double fallback) const { return has(key) ? number(key) : fallback; }
  bool boolean(const std::string& key, bool fallback) const;
  std::string string(const std::string& key, const std::string& fallback) const;
  // "<file>: <key> <value as written>: <why>"
  Error refuse(const std::string& key, const std::string& why) const;
  const std::string& file() const { return file_; }

 private:
  const nlohmann::json& j_;
  std::string file_;
};

// What an importer is given: the config (config.json), the tensors, and the tokenizer read
// beside them, whose size and special tokens the model's config must agree with.
struct ImportRequest {
  const nlohmann::json& config;
  std::string config_file;  // "DIR/config.json", for errors
  const ForeignTensors& tensors;
  const Tokenizer& tokenizer;
};

// What it gives back: potop's config (normalized), the model with every parameter filled, and
// notes for the user (what the other program does that potop does differently).
struct ImportedModel {
  nlohmann::json config;
  std::unique_ptr<Model> model;
  std::vector<std::string> notes;
};

// Fills a model's parameters from foreign tensors, each potop tensor once, and checks at the end
// that every parameter was filled and that no foreign tensor was left unread (but those the
// importer says it ignores: buffers such as GPT-2's causal mask).
class ParameterFiller {
 public:
  ParameterFiller(ParameterSet& params, const ForeignTensors& tensors) : params_(params), tensors_(tensors) {}

  // potop's `name` is the foreign `foreign` as it is (same shape).
  void same(const std::string& name, const std::string& foreign);
  // Columns [c0, c0 + rows of foreign) of potop's (in, out) matrix `name` are nn.Linear's weight
  // `foreign`, (out part, in): transposed into place. Several calls fill a fused matrix.
  void linear_columns(const std::string& name, const std::string& foreign, int64_t c0);
  // A whole (in, out) matrix from nn.Linear's (out, in).
  void linear(const std::string& name, const std::string& foreign) { linear_columns(name, foreign, 0); }
  // The foreign tensor is read and must equal potop's `name`, already filled (a tied head stored twice).
  void equal(const std::string& name, const std::string& foreign);
  // A foreign tensor potop has no use for (it is not a parameter).
  void ignore(const std::string& foreign) { read_.insert(foreign); }
  // Errors: a parameter not filled, or a foreign tensor not read ("<file>: tensor X is not one
  // of <architecture>'s, so potop cannot import it").
  void finish(const std::string& architecture) const;

 private:
  // The parameter's spec; Error when potop's model lacks it.
  const TensorSpec& spec(const std::string& name) const;
  // The foreign tensor's values; Error naming its file when its shape is not `shape`.
  std::vector<float> read(const std::string& foreign, const Shape& shape, const std::string& name);

  ParameterSet& params_;
  const ForeignTensors& tensors_;
  std::set<std::string> read_;
  std::map<std::string, size_t> filled_;  // potop's name -> values filled so far
};

}  // namespace potop
