#include "models/llama/llama_trainer.h"

#include <optional>

#include "models/gpt/token_data.h"
#include "models/llama/llama.h"
#include "models/llama/llama_kind.h"
#include "tokenizer/tokenizer.h"
#include "train/fine_tune.h"
#include "train/run_kit.h"
#include "train/window_batches.h"

namespace potop {

RunResult train_llama(const LlamaOptions& requested, std::FILE* log, const RunControl& control) {
  RunKit kit(control, kLlamaKind, "potop train --arch llama", log);
  LlamaOptions options = kit.resume(requested);
  validate(options);
  kit.start(options, {}, options.init_from);
  std::optional<LoadedLlama> base;  // --init-from: the model fine-tuned
  TokenData data = load_token_data(options, requested, options.model.block_size, kit, [&] {
    base.emplace(load_llama_dir(options.init_from));
    refuse_quantized(base->metadata, "--init-from " + options.init_from, "fine-tuning");
    options.model = fine_tuned_config(base->config, options.model, kit.control().given, options.init_from, llama_fields);
    return std::move(base->tokenizer);
  });
  const LlamaConfig config = options.model_config(data.tokenizer->size());
  config.validate("model");
  kit.check_config(config, llama_fields);
  const int B = options.batch_size, T = config.block_size;
  Llama& model = kit.build<Llama>(config, {B, T}, [&](Llama& m) {
    if (base) {  // fine-tuning: the base model's weights (the same config)
      const Arena& from = base->model->parameters().values();
      std::copy_n(from.data(), from.floats(), m.parameters().values().data());
      base->model.reset();
      return;
    }
    m.init_weights(options.seed);
    if (!options.init_embeddings.empty()) start_embeddings(m.parameters(), *data.tokenizer, options.init_embeddings, log,
                                                        "model.embed_tokens.weight");
  });
  kit.parallel().reserve({B, T});
  WindowBatches windows(kit, data.corpus.train(), data.corpus.val(), B, T, options);

  std::fprintf(log, "%s\n", data.summary.c_str());
  if (base) std::fprintf(log, "fine-tuning from %s\n", base->choice.c_str());
  std::fprintf(log, "model: %s: %zu parameters\n", llama_kind().describe(to_json(config)).c_str(),
               model.num_parameters());
  if (data.unknown.count > 0)
    std::fprintf(log, "note: %s: %s %s (--unknown)\n", options.data.c_str(), data.unknown.describe().c_str(),
                 options.unknown == Unknown::kSkip ? "left out" : "replaced");

  ModelJob job;
  windows.fill(job, kit.parallel());
  job.d_model = config.n_embd;
  // A fine-tuned imported model still ends its texts where its base does.
  const nlohmann::json generation = inherited_generation(kit, options.out, base ? &base->files : nullptr);
  job.write_model_files = [&](const nlohmann::json& saved) {
    save_model_files(options.out, config, *data.tokenizer, saved, generation);
  };
  return kit.run(job, *data.tokenizer, to_json(config), to_json(options), data.hash);
}

}  // namespace potop
