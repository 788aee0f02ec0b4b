#include "checkpoint/import_model.h"

#include <algorithm>
#include <cmath>

#include "checkpoint/model_dir.h"
#include "checkpoint/weights.h"
#include "core/error.h"
#include "core/file_io.h"

namespace potop {

namespace fs = std::filesystem;

void check_import_out(const fs::path& out) {
  if (fs::exists(out) && !(fs::is_directory(out) && fs::is_empty(out)))
    throw Error("--out " + out.string() + ": exists; potop import writes a new or empty directory and replaces nothing");
}

namespace {

// A NaN or infinite weight makes every output of the model NaN: `sample` would print NUL bytes,
// `eval` say "loss inf" and `train --init-from` blame the learning rate. Refused before anything
// is written, naming the first such tensor (a quantized matrix is checked as its floats).
void refuse_nonfinite_weights(const ParameterSet& params, const std::string& source) {
  for (ParamId id = 0; id < static_cast<ParamId>(params.layout().specs().size()); ++id) {
    const TensorSpec& spec = params.spec(id);
    std::vector<float> dequantized;
    const float* w = params.value(id);
    if (params.quantized(id)) {
      dequantized = params.dense_values(id);
      w = dequantized.data();
    }
    for (size_t i = 0; i < spec.numel; ++i)
      if (!std::isfinite(w[i]))
        throw Error(source + ": tensor " + spec.name + " holds " + (std::isnan(w[i]) ? "NaN" : "an infinite value") +
                    " (element " + std::to_string(i) + " of " + std::to_string(spec.numel) +
                    "); potop imports only finite weights");
  }
}

}  // namespace

void write_imported_model(const fs::path& out, ImportedModel& m, const Tokenizer& tokenizer, nlohmann::json provenance,
                          ImportSummary& s, const std::vector<int>& eos_ids, const std::string& chat_template) {
  refuse_nonfinite_weights(m.model->parameters(), provenance["from"].get<std::string>());
  const nlohmann::json normalized = s.kind->normalize(m.config, provenance["from"].get<std::string>());
  s.notes = std::move(m.notes);
  s.parameters = m.model->parameters().count();
  nlohmann::json extra = {{"imported", std::move(provenance)}};
  std::vector<int> ends;
  if (tokenizer.specials().eos >= 0) ends.push_back(tokenizer.specials().eos);
  for (const int id : eos_ids)
    if (id >= 0 && id < tokenizer.size() && std::find(ends.begin(), ends.end(), id) == ends.end()) ends.push_back(id);
  if (!ends.empty()) extra["generation"] = {{"eos_token_ids", ends}};
  const std::string quantized = m.model->parameters().quantization();
  if (!quantized.empty()) extra["quantized"] = quantized;
  if (!chat_template.empty()) extra["chat_template"] = chat_template;
  s.chat_template = chat_template;
  write_directory_atomic(out, [&](const fs::path& staging) {
    save_model_files(staging, s.kind->name, normalized, tokenizer, nlohmann::json::object(), extra);
    save_weights(staging / "latest.safetensors", m.model->parameters(), ModelHeader{s.kind->name, normalized, &tokenizer},
                 {{"imported_from", s.architecture}});
  });
}

}  // namespace potop
