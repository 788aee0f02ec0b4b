#include "models/llama/llama_kind.h"

#include "models/decoder/decoder_export.h"
#include "models/llama/llama.h"
#include "models/llama/llama_gguf.h"
#include "models/llama/llama_gguf_import.h"
#include "models/llama/llama_hf_export.h"
#include "models/llama/llama_hf_import.h"

namespace potop {

namespace {

std::string describe_llama(const nlohmann::json& j) {
  const LlamaConfig c = config_from_json<LlamaConfig>(j);
  const std::string heads = c.n_kv_head == c.n_head ? std::to_string(c.n_head) + " heads"
                            : c.n_kv_head == 1     ? std::to_string(c.n_head) + " heads sharing 1 K/V head"
                                                   : std::to_string(c.n_head) + " heads sharing " +
                                                         std::to_string(c.n_kv_head) + " K/V heads";
  return "Llama, " + std::to_string(c.n_layer) + " layers, " + heads + ", " + std::to_string(c.n_embd) +
         " wide, SwiGLU " + std::to_string(c.ffn_hidden) + ", block " + std::to_string(c.block_size) +
         ", RoPE θ " + nlohmann::json(c.rope_theta).dump() + ", " + (c.tie_embeddings ? "tied" : "untied") +
         " output head";
}

}  // namespace

const ModelKind& llama_kind() {
  static const ModelKind kind = model_kind_row<Llama, LlamaConfig>({
      .name = kLlamaKind,
      .description = "a Llama-style decoder: RoPE, RMSNorm, SwiGLU, grouped-query attention",
      .noun = "a Llama",
      .tokenizer = "",  // every llama directory names its tokenizer
      .tasks = {Task::kLanguageModel, Task::kCausalLM, Task::kSelfAttention},
      .commands = {"info", "eval", "sample", "attention", "serve", "quantize", "export", "train --init-from"},
      .hint = "it generates text with potop sample",
      .trainer = "potop train --arch llama",
      .describe = describe_llama,
      .kv_cache_per_token = [](const nlohmann::json& j) {
        const LlamaConfig c = config_from_json<LlamaConfig>(j);
        return std::pair{2.0 * c.n_layer * c.n_kv_head * c.head_size() * sizeof(float),
                         std::to_string(c.n_layer) + " layers × K,V × " + std::to_string(c.n_kv_head) + " K/V heads × " +
                             std::to_string(c.head_size()) + " floats"};
      },
      .export_gguf = [](const Model& m, const Tokenizer& t, const ExportRequest& r) {
        return export_gguf_file<Llama>(m, t, r, llama_gguf, "llama");
      },
      .export_hf = [](const Model& m, const Tokenizer& t, const ExportRequest& r) {
        return export_hf_directory<Llama>(m, t, r, export_hf, "a Hugging Face Llama directory (LlamaForCausalLM)");
      },
      .hf_architectures = {"LlamaForCausalLM"},
      .import_hf = import_llama_hf,
      .gguf_architecture = "llama",
      .import_gguf = import_llama_gguf,
  });
  return kind;
}

void save_model_files(const fs::path& dir, const LlamaConfig& config, const Tokenizer& tokenizer,
                      const nlohmann::json& training, const nlohmann::json& extra) {
  save_model_files(dir, llama_kind().name, to_json(config), tokenizer, training, extra);
}

LoadedLlama load_llama_dir(const fs::path& dir, const std::string& which) {
  return load_model_dir_as<Llama, LlamaConfig>(dir, which, llama_kind().name);
}

}  // namespace potop
