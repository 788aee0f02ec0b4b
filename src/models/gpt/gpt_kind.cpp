#include "models/gpt/gpt_kind.h"

#include "models/decoder/decoder_export.h"
#include "models/gpt/gpt.h"
#include "models/gpt/gpt_gguf.h"
#include "models/gpt/gpt_gguf_import.h"
#include "models/gpt/gpt_hf_export.h"
#include "models/gpt/gpt_hf_import.h"

namespace potop {

namespace {

std::string describe_gpt(const nlohmann::json& j) {
  const GPTConfig c = config_from_json<GPTConfig>(j);
  return "GPT, " + describe_shape(c) + ", " + (c.bias ? "with" : "no") + " biases";
}

}  // namespace

const ModelKind& gpt_kind() {
  static const ModelKind kind = model_kind_row<GPT, GPTConfig>({
      .name = kGptKind,
      .description = "a decoder-only Transformer language model",
      .noun = "a GPT",
      .tokenizer = "char",  // directories from before the other tokenizers name none
      .tasks = {Task::kLanguageModel, Task::kCausalLM, Task::kSelfAttention},
      .commands = {"info", "eval", "sample", "attention", "serve", "quantize", "export", "train --init-from"},
      .hint = "it generates text with potop sample",
      .trainer = "potop train",
      .describe = describe_gpt,
      .kv_cache_per_token = [](const nlohmann::json& j) {
        const GPTConfig c = config_from_json<GPTConfig>(j);
        return std::pair{2.0 * c.n_layer * c.n_embd * sizeof(float),
                         std::to_string(c.n_layer) + " layers × K,V × " + std::to_string(c.n_head) + " heads × " +
                             std::to_string(c.head_size()) + " floats"};
      },
      .lends_body = true,
      .export_gguf = [](const Model& m, const Tokenizer& t, const ExportRequest& r) {
        return export_gguf_file<GPT>(m, t, r, gpt2_gguf, "gpt2");
      },
      .export_hf = [](const Model& m, const Tokenizer& t, const ExportRequest& r) {
        return export_hf_directory<GPT>(m, t, r, export_hf, "a Hugging Face GPT-2 directory (GPT2LMHeadModel)");
      },
      .hf_architectures = {"GPT2LMHeadModel", "GPT2Model"},
      .import_hf = import_gpt2_hf,
      .gguf_architecture = "gpt2",
      .import_gguf = import_gpt2_gguf,
  });
  return kind;
}

ModelHeader gpt_header(const GPTConfig& config, const Tokenizer& tokenizer) {
  return ModelHeader{gpt_kind().name, to_json(config), &tokenizer};
}

void save_model_files(const fs::path& dir, const GPTConfig& config, const Tokenizer& tokenizer,
                      const nlohmann::json& training, const nlohmann::json& extra) {
  save_model_files(dir, gpt_kind().name, to_json(config), tokenizer, training, extra);
}

LoadedGpt load_gpt_dir(const fs::path& dir, const std::string& which) {
  return load_model_dir_as<GPT, GPTConfig>(dir, which, gpt_kind().name);
}

}  // namespace potop
