// potop import: a model another program wrote (a Hugging Face directory, a GGUF file), as its
// config and its named tensors, and what a model folder's importer (ModelKind::import_hf,
// import_gguf, nn/model_kind.h) makes of it. The readers of the files live in checkpoint/
// (hf_import.h, gguf_import.h); the names and shapes of each architecture live in its model's
// folder (models/gpt/gpt_hf_import.cpp, gpt_gguf_import.cpp, ...), beside its export.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "kernels/quant.h"
#include "nn/model.h"
#include "nn/parameters.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// A matrix a file holds quantized (q8_0, q4_0) as ggml rows: `rows` rows of `cols` values, one
// row per output of an nn.Linear-shaped (out, in) weight: the layout of potop's QuantizedMatrix.
struct ForeignQuantized {
  QuantType type;
  int64_t rows = 0, cols = 0;
  const uint8_t* data = nullptr;  // rows · quant_row_bytes(type, cols) bytes, valid while the source lives
};

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
  // Its quantized rows where the file stores it q8_0 or q4_0 (a GGUF file), so that the model
  // keeps them as they are; nullopt for a tensor stored as floats.
  virtual std::optional<ForeignQuantized> quantized(const std::string&) const { return std::nullopt; }
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

// What an importer is given: the config (config.json, or a GGUF file's metadata), the tensors,
// and the tokenizer read beside them, whose size and special tokens the model's config must
// agree with.
struct ImportRequest {
  const nlohmann::json& config;
  std::string config_file;  // "DIR/config.json" or "FILE.gguf", for errors
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
// importer says it ignores: buffers such as GPT-2's causal mask). A matrix potop may keep
// quantized (TensorSpec::matrix) whose every part the file stores in one of q8_0 and q4_0 stays
// in it, its rows as the file has them; any other quantized tensor is dequantized to float32,
// and a note says so.
class ParameterFiller {
 public:
  ParameterFiller(ParameterSet& params, const ForeignTensors& tensors) : params_(params), tensors_(tensors) {}

  // potop's `name` is the foreign `foreign` as it is (same shape).
  void same(const std::string& name, const std::string& foreign);
  // Columns [c0, c0 + rows of foreign) of potop's (in, out) matrix `name` are nn.Linear's weight
  // `foreign`, (out part, in): transposed into place. Several calls fill a fused matrix.
  // row_order, when given, reorders the foreign rows first: column c0 + r is foreign row
  // row_order[r] (llama.cpp's rotary rows back into Hugging Face's order).
  void linear_columns(const std::string& name, const std::string& foreign, int64_t c0,
                      const std::vector<int64_t>& row_order = {});
  // A whole (in, out) matrix from nn.Linear's (out, in).
  void linear(const std::string& name, const std::string& foreign) { linear_columns(name, foreign, 0); }
  // Elements [offset, offset + n) of potop's vector `name` are the foreign vector of n values: a
  // fused bias (BERT's query, key and value biases in c_attn.bias) filled part by part.
  void vector_part(const std::string& name, const std::string& foreign, int64_t offset);
  // potop's `name` has no foreign tensor and stays zero (a head the file lacks); `note` says so.
  void zero(const std::string& name, const std::string& note);
  // The foreign tensor is read and must equal potop's `name`, already filled (a tied head stored twice).
  void equal(const std::string& name, const std::string& foreign);
  // Whether potop's model has a parameter `name` (an optional part: BERT's pooler).
  bool wants(const std::string& name) const { return params_.layout().find(name) != nullptr; }
  // A foreign tensor potop has no use for (it is not a parameter).
  void ignore(const std::string& foreign) { read_.insert(foreign); }
  // Errors: a parameter its tensors fill only in part (the config's shapes, a head count say,
  // disagree with the tensors), or a foreign tensor not read ("<file>: tensor X is not one of
  // <architecture>'s, so potop cannot import it"). Then stores the matrices that stay quantized
  // (ParameterSet::set_quantized).
  void finish(const std::string& architecture);
  // What the user should know: tensors dequantized, and why.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  // The parameter's spec; Error when potop's model lacks it.
  const TensorSpec& spec(const std::string& name) const;
  // The foreign tensor's values; Error naming its file when its shape is not `shape`.
  std::vector<float> read(const std::string& foreign, const Shape& shape, const std::string& name);

  // Whether the foreign tensor's quantized rows are kept, copied (in row_order), for potop's
  // matrix `name` from column c0 (then its floats are not read); for a quantized tensor that is
  // not a matrix potop quantizes, false and the note that it is dequantized.
  bool keep_quantized(const std::string& name, const std::string& foreign, int64_t c0,
                      const std::vector<int64_t>& row_order);

  // Rows of a quantized matrix gathered from its parts: first row -> (type, the rows' bytes).
  struct QuantizedPart {
    QuantType type;
    int64_t rows;
    std::vector<uint8_t> bytes;
  };

  ParameterSet& params_;
  const ForeignTensors& tensors_;
  std::set<std::string> read_;
  std::map<std::string, size_t> filled_;  // potop's name -> values filled so far
  std::map<std::string, std::string> part_of_;  // potop's name -> the first foreign tensor filling part of it
  std::map<std::string, std::map<int64_t, QuantizedPart>> quantized_;  // potop's matrix -> its parts
  std::map<std::string, std::string> dequantized_;                     // foreign name -> its type
  std::vector<std::string> notes_;
};

}  // namespace potop
