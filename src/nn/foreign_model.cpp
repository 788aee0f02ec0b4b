#include "nn/foreign_model.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"

namespace potop {

namespace {

// The foreign tensor's shape; an Error naming its file when it is missing (potop's `name`).
Shape shape_of(const ForeignTensors& tensors, const std::string& foreign, const std::string& name) {
  if (!tensors.has(foreign))
    throw Error(tensors.file_of(foreign) + ": tensor " + foreign + " is missing (potop's " + name + ")");
  return tensors.shape(foreign);
}

}  // namespace

int ForeignConfig::integer(const std::string& key) const {
  if (!has(key)) throw Error(file_ + ": " + key + " is missing");
  const nlohmann::json& v = j_.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > std::numeric_limits<int>::max())
    throw refuse(key, "expected a non-negative integer");
  return v.get<int>();
}

double ForeignConfig::number(const std::string& key) const {
  if (!has(key)) throw Error(file_ + ": " + key + " is missing");
  const nlohmann::json& v = j_.at(key);
  if (!v.is_number()) throw refuse(key, "expected a number");
  return v.get<double>();
}

bool ForeignConfig::boolean(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const nlohmann::json& v = j_.at(key);
  if (!v.is_boolean()) throw refuse(key, "expected true or false");
  return v.get<bool>();
}

std::string ForeignConfig::string(const std::string& key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  const nlohmann::json& v = j_.at(key);
  if (!v.is_string()) throw refuse(key, "expected a string");
  return v.get<std::string>();
}

Error ForeignConfig::refuse(const std::string& key, const std::string& why) const {
  return Error(file_ + ": " + key + " " + (j_.contains(key) ? j_.at(key).dump() : std::string("(absent)")) + ": " + why);
}

const TensorSpec& ParameterFiller::spec(const std::string& name) const {
  const TensorSpec* s = params_.layout().find(name);
  POTOP_CHECK(s, "the model has no parameter " + name);
  return *s;
}

std::vector<float> ParameterFiller::read(const std::string& foreign, const Shape& shape, const std::string& name) {
  const Shape got = shape_of(tensors_, foreign, name);
  if (got != shape)
    throw Error(tensors_.file_of(foreign) + ": tensor " + foreign + " is " + shape_string(got) + ", the config says " +
                shape_string(shape));
  if (!read_.insert(foreign).second) throw Error(tensors_.file_of(foreign) + ": tensor " + foreign + " is read twice");
  std::vector<float> values(shape_numel(shape));
  tensors_.read(foreign, values.data());
  return values;
}

void ParameterFiller::same(const std::string& name, const std::string& foreign) {
  const TensorSpec& s = spec(name);
  if (const std::optional<ForeignQuantized> q = tensors_.quantized(foreign)) dequantized_[foreign] = to_string(q->type);
  const std::vector<float> v = read(foreign, s.shape, name);
  std::memcpy(params_.values().at(s), v.data(), v.size() * sizeof(float));
  filled_[name] += v.size();
}

void ParameterFiller::vector_part(const std::string& name, const std::string& foreign, int64_t offset) {
  const TensorSpec& s = spec(name);
  POTOP_CHECK(s.shape.size() == 1, name + " is not a vector");
  const Shape got = shape_of(tensors_, foreign, name);
  if (got.size() != 1 || offset + got[0] > s.shape[0])
    throw Error(tensors_.file_of(foreign) + ": tensor " + foreign + " is " + shape_string(got) +
                ", which does not fit the config's shapes");
  if (const std::optional<ForeignQuantized> q = tensors_.quantized(foreign)) dequantized_[foreign] = to_string(q->type);
  part_of_.emplace(name, foreign);
  const std::vector<float> v = read(foreign, got, name);
  std::memcpy(params_.values().at(s) + offset, v.data(), v.size() * sizeof(float));
  filled_[name] += v.size();
}

void ParameterFiller::zero(const std::string& name, const std::string& note) {
  const TensorSpec& s = spec(name);
  std::fill_n(params_.values().at(s), shape_numel(s.shape), 0.0f);
  filled_[name] = shape_numel(s.shape);
  notes_.push_back(note);
}

void ParameterFiller::linear_columns(const std::string& name, const std::string& foreign, int64_t c0,
                                     const std::vector<int64_t>& row_order) {
  const TensorSpec& s = spec(name);
  POTOP_CHECK(s.shape.size() == 2, name + " is not a matrix");
  const int64_t in = s.shape[0], out = s.shape[1];
  const Shape got = shape_of(tensors_, foreign, name);
  const int64_t rows = got.size() == 2 ? got[0] : -1;
  if (rows < 1 || c0 + rows > out)
    throw Error(tensors_.file_of(foreign) + ": tensor " + foreign + " is " + shape_string(got) +
                ", which does not fit the config's shapes");
  // The row order comes from the config's head counts: a tensor of other rows disagrees with them.
  if (!row_order.empty() && static_cast<int64_t>(row_order.size()) != rows)
    throw Error(tensors_.file_of(foreign) + ": tensor " + foreign + " is " + shape_string(got) + ", where the config's head " +
                "counts give it " + std::to_string(row_order.size()) + " rows");
  part_of_.emplace(name, foreign);
  if (keep_quantized(name, foreign, c0, row_order)) {  // its rows as they are: no floats needed
    if (!read_.insert(foreign).second) throw Error(tensors_.file_of(foreign) + ": tensor " + foreign + " is read twice");
    filled_[name] += static_cast<size_t>(rows * in);
    return;
  }
  const std::vector<float> w = read(foreign, {rows, in}, name);
  float* dst = params_.values().at(s);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = w.data() + (row_order.empty() ? r : row_order[static_cast<size_t>(r)]) * in;
    for (int64_t i = 0; i < in; ++i) dst[i * out + c0 + r] = row[i];
  }
  filled_[name] += w.size();
}

bool ParameterFiller::keep_quantized(const std::string& name, const std::string& foreign, int64_t c0,
                                     const std::vector<int64_t>& row_order) {
  const std::optional<ForeignQuantized> q = tensors_.quantized(foreign);
  if (!q) return false;
  if (!spec(name).matrix) {
    dequantized_[foreign] = to_string(q->type);
    return false;
  }
  if (q->cols != spec(name).shape[0]) return false;  // read() refuses its shape
  const size_t row_bytes = quant_row_bytes(q->type, static_cast<int>(q->cols));
  QuantizedPart part{q->type, q->rows, std::vector<uint8_t>(row_bytes * static_cast<size_t>(q->rows))};
  for (int64_t r = 0; r < q->rows; ++r) {
    const int64_t from = row_order.empty() ? r : row_order[static_cast<size_t>(r)];
    std::memcpy(part.bytes.data() + r * row_bytes, q->data + from * row_bytes, row_bytes);
  }
  quantized_[name].emplace(c0, std::move(part));
  return true;
}

void ParameterFiller::equal(const std::string& name, const std::string& foreign) {
  const TensorSpec& s = spec(name);
  POTOP_CHECK(filled_[name] == shape_numel(s.shape), name + " must be filled before it is compared");
  const std::vector<float> v = read(foreign, s.shape, name);
  if (std::memcmp(v.data(), params_.values().at(s), v.size() * sizeof(float)) != 0)
    throw Error(tensors_.file_of(foreign) + ": tensor " + foreign + " differs from the one the config ties it to (" +
                name + "); potop's model ties them");
}

void ParameterFiller::finish(const std::string& architecture) {
  for (const TensorSpec& s : params_.layout().specs()) {
    const auto it = filled_.find(s.name);
    const size_t got = it == filled_.end() ? 0 : it->second;
    // Part of a fused matrix left empty: its tensors are smaller than the config's shapes make it
    // (num_key_value_heads larger than the key and value tensors hold).
    const auto part = part_of_.find(s.name);
    if (got != shape_numel(s.shape) && part != part_of_.end())
      throw Error(tensors_.file_of(part->second) + ": tensors such as " + part->second + " fill " + std::to_string(got) +
                  " of the " + std::to_string(shape_numel(s.shape)) + " values the config's shapes give potop's " + s.name +
                  ": the config (its head counts, its sizes) does not match the tensors");
    POTOP_CHECK(got == shape_numel(s.shape), "the importer filled " + std::to_string(got) + " of " +
                                                 std::to_string(shape_numel(s.shape)) + " values of " + s.name);
  }
  for (const std::string& name : tensors_.names())
    if (!read_.count(name))
      throw Error(tensors_.file_of(name) + ": tensor " + name + " is not one of " + architecture +
                  "'s, so potop cannot import it");
  // A matrix stays quantized when the file stores all of its rows in one type.
  for (auto& [name, parts] : quantized_) {
    const TensorSpec& s = spec(name);
    const int64_t in = s.shape[0], out = s.shape[1];
    int64_t next = 0;
    bool whole = true;
    for (const auto& [first, part] : parts) {
      whole = whole && first == next && part.type == parts.begin()->second.type;
      next = first + part.rows;
    }
    if (!whole || next != out) {  // parts of several types: the matrix is float32, each part dequantized
      float* dst = params_.values().at(s);
      std::vector<float> row(static_cast<size_t>(in));
      for (const auto& [first, part] : parts) {
        const size_t row_bytes = quant_row_bytes(part.type, static_cast<int>(in));
        for (int64_t r = 0; r < part.rows; ++r) {
          dequantize_row(part.type, part.bytes.data() + r * row_bytes, static_cast<int>(in), row.data());
          for (int64_t i = 0; i < in; ++i) dst[i * out + first + r] = row[static_cast<size_t>(i)];
        }
        dequantized_[name + " (rows from " + std::to_string(first) + ")"] = to_string(part.type);
      }
      continue;
    }
    QuantizedMatrix m{parts.begin()->second.type, static_cast<int>(out), static_cast<int>(in), QuantLayout::kRows, {}};
    for (const auto& [first, part] : parts) m.data.insert(m.data.end(), part.bytes.begin(), part.bytes.end());
    params_.set_quantized(static_cast<ParamId>(params_.layout().find(name) - params_.layout().specs().data()),
                          std::move(m));
  }
  if (!dequantized_.empty()) {
    std::string list;
    for (const auto& [name, type] : dequantized_) list += (list.empty() ? "" : ", ") + name + " (" + type + ")";
    notes_.push_back("float32 now, quantized in the file: " + list +
                     "; potop keeps embeddings, norms and output tables in float32 (it quantizes the matrices of "
                     "attention and the feed-forward blocks)");
  }
}

}  // namespace potop
