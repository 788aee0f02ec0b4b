#include "checkpoint/quantize_model.h"

#include <nlohmann/json.hpp>
#include <system_error>

#include "checkpoint/weights.h"
#include "core/error.h"
#include "core/file_io.h"

namespace potop {

namespace {

// W (K, N) as stored for training, to Wᵀ's N rows of K quantized weights.
QuantizedMatrix quantize_matrix(const float* W, int K, int N, QuantType type) {
  QuantizedMatrix m{type, N, K, QuantLayout::kRows, {}};
  m.data.resize(static_cast<size_t>(N) * m.row_bytes());
#pragma omp parallel
  {
    std::vector<float> row(static_cast<size_t>(K));
#pragma omp for schedule(static)
    for (int n = 0; n < N; ++n) {
      for (int k = 0; k < K; ++k) row[static_cast<size_t>(k)] = W[static_cast<size_t>(k) * N + n];
      quantize_row(type, row.data(), K, m.data.data() + static_cast<size_t>(n) * m.row_bytes());
    }
  }
  return m;
}

// The checkpoint's own facts (step, losses, what the caller added), without the keys
// save_weights writes for the model.
Metadata carried_metadata(const Metadata& from) {
  Metadata out;
  for (const auto& [key, value] : from)
    if (!key.starts_with("potop.") && key != "format") out[key] = value;
  return out;
}

void save_quantized_weights(const LoadedModel& model, const fs::path& path) {
  const ModelHeader header{model.kind->name, model.config, model.tokenizer.get()};
  save_weights(path, model.model->parameters(), header, carried_metadata(model.metadata));
}

}  // namespace

QuantizeReport quantize_matrices(ParameterSet& params, QuantType type) {
  POTOP_CHECK(!params.any_quantized(), "the parameters are quantized already");
  QuantizeReport report;
  const auto& specs = params.layout().specs();
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& spec = specs[i];
    report.bytes_before += spec.numel * sizeof(float);
    if (!spec.matrix) {
      report.bytes_after += spec.numel * sizeof(float);
      continue;
    }
    const int K = static_cast<int>(spec.shape[0]), N = static_cast<int>(spec.shape[1]);
    if (!quant_row_fits(type, K)) {
      report.kept.push_back(spec.name + ": " + std::to_string(K) + " inputs, not whole blocks of " +
                            std::to_string(kQuantBlock));
      report.bytes_after += spec.numel * sizeof(float);
      continue;
    }
    const ParamId id = static_cast<ParamId>(i);
    params.set_quantized(id, quantize_matrix(params.value(id), K, N, type));
    report.bytes_after += static_cast<size_t>(N) * quant_row_bytes(type, K);
    ++report.matrices;
  }
  params.quantize_output_tables(type);
  return report;
}

fs::path default_quantized_path(const fs::path& model, QuantType type) {
  fs::path clean = model.lexically_normal();
  if (clean.has_filename() == false) clean = clean.parent_path();  // "dir/" -> "dir"
  if (clean.extension() == ".safetensors")
    return clean.parent_path() / (clean.stem().string() + "-" + to_string(type) + ".safetensors");
  return clean.parent_path() / (clean.filename().string() + "-" + to_string(type));
}

void write_quantized_model(const LoadedModel& model, const fs::path& source, const fs::path& out, QuantType type) {
  std::error_code ec;
  if (fs::exists(out, ec)) throw Error("--out " + out.string() + ": exists; remove it or choose another --out");
  const bool lone_file = !fs::is_directory(source);
  if (lone_file && out.extension() != ".safetensors")
    throw Error("--out " + out.string() + ": a lone weights file quantizes to a .safetensors file");
  ensure_writable_directory(out.parent_path().empty() ? fs::path(".") : out.parent_path());
  if (lone_file) return save_quantized_weights(model, out);
  try {
    write_directory_atomic(out, [&](const fs::path& staging) {
      // The tokenizer's files, metrics and a translation model's splits come along; checkpoints
      // (float ones, and the training state) and lock files do not.
      for (const auto& entry : fs::directory_iterator(source)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_regular_file() || name.starts_with(".") || entry.path().extension() == ".safetensors") continue;
        if (name != "config.json") fs::copy_file(entry.path(), staging / name);
      }
      nlohmann::json config = model.files;
      config["quantized"] = to_string(type);
      write_file_atomic(staging / "config.json", config.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
      save_quantized_weights(model, staging / "latest.safetensors");
    });
  } catch (const fs::filesystem_error& e) {
    throw Error("--out " + out.string() + ": " + e.code().message());
  }
}

}  // namespace potop
