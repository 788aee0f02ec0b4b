#include "cli/model_args.h"

#include "core/threads.h"

namespace potop::cli {

void add_model_options(CLI::App* cmd, ModelArgs& a, bool required) {
  auto* model = cmd->add_option("-m,--model", a.model,
                                "model directory (see potop info), or one of its .safetensors files");
  if (required) model->required();
  cmd->add_option("--checkpoint", a.checkpoint,
                  "which weights: best, latest, resume, step-N or a .safetensors path (default: the newest that is "
                  "not worse than best)");
  cmd->add_option("-t,--threads", a.threads,
                  "threads to use (0 = all cores; sample: one for a model under 1M parameters)")
      ->capture_default_str();
}

void apply_model_threads(const ModelArgs& a) {
  apply_threads_flag(a.threads);
}

void fit_generation_threads(const ModelArgs& a, size_t parameters) {
  if (a.threads == 0 && parameters < kOneThreadGeneration) set_threads(1);
}

void add_kv_cache_option(CLI::App* cmd, std::string& type) {
  cmd->add_option("--kv-cache", type,
                  "what generation's KV cache stores keys and values as: f32 (exact: a cached step gives a full "
                  "forward pass's logits) or f16 (half the memory and the bytes a token reads, as llama.cpp's "
                  "default; each key and value rounded to the nearest half)")
      ->capture_default_str();
}

LoadedModel load_model(const ModelArgs& a) {
  return load_model_with(a, [](const std::string& dir, const std::string& which) { return load_model_dir(dir, which); });
}

LoadedModel load_model_for(const ModelArgs& a, Task task, const std::string& wanted) {
  LoadedModel m = load_model(a);
  if (!m.kind->can(task)) throw wrong_kind(a.model, *m.kind, wanted);
  return m;
}

}  // namespace potop::cli
