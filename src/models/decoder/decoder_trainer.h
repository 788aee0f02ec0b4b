// `potop train --arch A` for every causal decoder: its text data (models/decoder/text_data.h), its
// tokenizer, its model (new, fine-tuned from --init-from, or resumed) and its batches, written
// once; everything else a run does — resume, --force, ranks, checkpoints, progress — is the run
// kit's (train/run_kit.h). An architecture brings a recipe: its kind, its loader, its fields and
// how its "model:" line reads. And the architectures `potop train --arch` offers are a table
// (decoder_archs(), listed in models/kinds.cpp): a name, the kind, a summary for --help and a
// trainer holding that architecture's options.
#pragma once
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/fields.h"
#include "models/decoder/text_data.h"
#include "tokenizer/tokenizer.h"
#include "train/fine_tune.h"
#include "train/run.h"
#include "train/run_kit.h"
#include "train/window_batches.h"

namespace potop {

template <class Options, class Loaded>
struct DecoderRecipe {
  using Config = decltype(Options::model);
  const char* kind;     // the kinds table's name
  const char* command;  // "potop train --arch llama", for messages
  Loaded (*load)(const std::filesystem::path& dir, const std::string& which);
  std::vector<Field> (*fields)(Config& config);  // the model's, for --init-from's and resume's checks
  // The text of the "model:" line, before ": N parameters".
  std::string (*describe)(const Config& config);
  // Checks past the config's own (may be null): the GPT refuses BERT's head flags.
  void (*check)(const Config& config) = nullptr;
};

// Throws potop::Error for every bad input (file, flag, directory, checkpoint), and when a step's
// loss or gradient norm is not finite (unless options.skip_nonfinite).
template <class Model, class Options, class Loaded>
RunResult train_decoder(const DecoderRecipe<Options, Loaded>& recipe, const Options& requested, std::FILE* log,
                        const RunControl& control) {
  using Config = typename DecoderRecipe<Options, Loaded>::Config;
  RunKit kit(control, recipe.kind, recipe.command, log);
  Options options = kit.resume(requested);
  validate(options);
  kit.start(options, {}, options.init_from);
  std::optional<Loaded> base;  // --init-from: the model fine-tuned
  TokenData data = load_token_data(options, requested, options.model.block_size, kit, [&] {
    base.emplace(recipe.load(options.init_from, ""));
    refuse_quantized(base->metadata, "--init-from " + options.init_from, "fine-tuning");
    options.model = fine_tuned_config(base->config, options.model, kit.control().given, options.init_from, recipe.fields);
    return std::move(base->tokenizer);
  });
  const Config config = options.model_config(data.tokenizer->size());
  config.validate("model");
  if (recipe.check) recipe.check(config);
  kit.check_config(config, recipe.fields);
  const int B = options.batch_size, T = config.block_size;
  Model& model = kit.template build<Model>(config, {B, T}, [&](Model& m) {
    if (base) {  // fine-tuning: the base model's weights (the same layout: the same config)
      const Arena& from = base->model->parameters().values();
      std::copy_n(from.data(), from.floats(), m.parameters().values().data());
      base->model.reset();
      return;
    }
    m.init_weights(options.seed);
    if (!options.init_embeddings.empty())
      start_embeddings(m.parameters(), *data.tokenizer, options.init_embeddings, log, m.shape().names.token_table);
  });
  kit.parallel().reserve({B, T});
  WindowBatches windows(kit, data.corpus.train(), data.corpus.val(), B, T, options);

  std::fprintf(log, "%s\n", data.summary.c_str());
  if (base) std::fprintf(log, "fine-tuning from %s\n", base->choice.c_str());
  std::fprintf(log, "model: %s: %zu parameters\n", recipe.describe(config).c_str(), model.num_parameters());
  if (data.unknown.count > 0)
    std::fprintf(log, "note: %s: %s %s (--unknown)\n", options.data.c_str(), data.unknown.describe().c_str(),
                 options.unknown == Unknown::kSkip ? "left out" : "replaced");

  ModelJob job;
  windows.fill(job, kit.parallel());
  job.d_model = config.n_embd;
  // A fine-tuned imported model still ends its texts where its base does.
  const nlohmann::json generation = inherited_generation(kit, options.out, base ? &base->files : nullptr);
  job.write_model_files = [&](const nlohmann::json& saved) {
    save_model_files(options.out, recipe.kind, to_json(config), *data.tokenizer, saved, generation);
  };
  return kit.run(job, *data.tokenizer, to_json(config), to_json(options), data.hash);
}

// One architecture's options and run, behind one interface, for `potop train --arch`.
class ArchTrainer {
 public:
  virtual ~ArchTrainer() = default;
  // Its options' fields (data, model, run), bound to the options this trainer holds.
  virtual std::vector<Field> fields() = 0;
  virtual TextDataOptions& options() = 0;  // what every architecture's options share
  virtual RunResult train(std::FILE* log, const RunControl& control) = 0;
};

template <class Options>
class OptionsTrainer final : public ArchTrainer {
 public:
  using Train = RunResult (*)(const Options&, std::FILE*, const RunControl&);
  OptionsTrainer(std::vector<Field> (*option_fields)(Options&), Train run) : fields_(option_fields), train_(run) {}
  std::vector<Field> fields() override { return fields_(options_); }
  TextDataOptions& options() override { return options_; }
  RunResult train(std::FILE* log, const RunControl& control) override { return train_(options_, log, control); }

 private:
  Options options_;
  std::vector<Field> (*fields_)(Options&);
  Train train_;
};

struct DecoderArch {
  std::string name;     // --arch's value: "gpt2"
  std::string kind;     // the kinds table's name of its models
  std::string summary;  // for --help: "learned positions, LayerNorm, GELU"
  std::function<std::unique_ptr<ArchTrainer>()> trainer;
};

// The architectures `potop train` trains, the default first (models/kinds.cpp lists them).
const std::vector<DecoderArch>& decoder_archs();

}  // namespace potop
