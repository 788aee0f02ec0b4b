#include "models/gpt/gpt_trainer.h"

#include <optional>

#include "checkpoint/model_dir.h"
#include "models/gpt/gpt_kind.h"
#include "core/error.h"
#include "models/gpt/gpt.h"
#include "models/gpt/token_data.h"
#include "tokenizer/tokenizer.h"
#include "train/fine_tune.h"
#include "train/run_kit.h"
#include "train/window_batches.h"

namespace potop {

RunResult train_gpt(const GptOptions& requested, std::FILE* log, const RunControl& control) {
  RunKit kit(control, kGptKind, "potop train", log);
  GptOptions options = kit.resume(requested);
  validate(options);
  kit.start(options, {}, options.init_from);
  std::optional<LoadedGpt> base;  // --init-from: the model fine-tuned
  TokenData data = load_token_data(options, requested, options.model.block_size, kit, [&] {
    base.emplace(load_gpt_dir(options.init_from));
    refuse_quantized(base->metadata, "--init-from " + options.init_from, "fine-tuning");
    options.model = fine_tuned_config(base->config, options.model, kit.control().given, options.init_from, gpt_fields);
    return std::move(base->tokenizer);
  });
  const GPTConfig config = options.model_config(data.tokenizer->size());
  config.validate("model");
  if (config.mlm_transform || config.mask_in_vocab)
    throw Error(std::string("--") + (config.mlm_transform ? "mlm-transform" : "mask-in-vocab") +
                ": a BERT's masked-LM head (potop bert pretrain); the GPT predicts every next token with its tied head");
  kit.check_config(config, gpt_fields);
  const int B = options.batch_size, T = config.block_size;
  GPT& model = kit.build<GPT>(config, {B, T}, [&](GPT& m) {
    if (base) {  // fine-tuning: the base model's weights (the same layout: the same config)
      const Arena& from = base->model->parameters().values();
      std::copy_n(from.data(), from.floats(), m.parameters().values().data());
      base->model.reset();
      return;
    }
    m.init_weights(options.seed);
    if (!options.init_embeddings.empty()) start_embeddings(m.parameters(), *data.tokenizer, options.init_embeddings, log);
  });
  kit.parallel().reserve({B, T});
  WindowBatches windows(kit, data.corpus.train(), data.corpus.val(), B, T, options);

  std::fprintf(log, "%s\n", data.summary.c_str());
  if (base) std::fprintf(log, "fine-tuning from %s\n", base->choice.c_str());
  std::fprintf(log, "model: %d layers, %d heads, %d wide, block %d, %s-LN, %s, %s positions: %zu parameters\n",
               config.n_layer, config.n_head, config.n_embd, config.block_size, to_string(config.norm).c_str(),
               to_string(config.activation).c_str(), to_string(config.positions).c_str(), model.num_parameters());
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
