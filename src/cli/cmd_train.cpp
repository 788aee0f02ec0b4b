// potop train: a decoder-only language model on a text, its architecture chosen by --arch (the
// GPT-2 decoder by default, or a Llama-style one). One flag list serves both: the flags of one
// architecture that the other lacks are refused with --arch named.
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "checkpoint/model_dir.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/train_command.h"
#include "core/error.h"
#include "models/gpt/gpt_trainer.h"
#include "models/llama/llama_kind.h"
#include "models/llama/llama_trainer.h"
#include "train/run_options.h"

namespace potop::cli {

namespace {

// The architecture of the model a run continues (--resume) or starts from (--init-from): its
// model directory's kind.
std::string model_arch(const std::string& model) {
  std::error_code ec;
  const fs::path dir = fs::is_directory(model, ec) ? fs::path(model) : fs::path(model).parent_path();
  try {
    const nlohmann::json config = read_config_json(dir);
    if (config.value("kind", "") == kLlamaKind) return "llama";
  } catch (const std::exception&) {
    // no readable config.json: the run kit names what is wrong with the directory
  }
  return "gpt2";
}

bool has_field(const std::vector<Field>& fields, const std::string& name) { return find_field(fields, name) != nullptr; }

}  // namespace

Run add_train(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "train", "train a language model on a text file (one token per character, or --tokenizer DIR): GPT-2's decoder "
               "or, with --arch llama, a Llama-style one; or resume a run");
  auto gpt = std::make_shared<GptOptions>();
  auto llama = std::make_shared<LlamaOptions>();
  auto arch = std::make_shared<std::string>("gpt2");
  auto config = std::make_shared<std::string>();
  auto flags = std::make_shared<TrainFlags>();
  cmd->add_option("--arch", *arch, "gpt2 (learned positions, LayerNorm, GELU) or llama (RoPE, RMSNorm, SwiGLU, "
                                   "grouped-query attention); a resumed or fine-tuned model keeps its own")
      ->check(CLI::IsMember({"gpt2", "llama"}))
      ->capture_default_str();
  cmd->add_option("--config", *config, "JSON file of options (keys like n_layer); flags override it")
      ->check(CLI::ExistingFile);
  // The GPT's flags, then the Llama's that the GPT lacks (--n-kv-head, ...).
  const std::vector<Field> gpt_fields = gpt_option_fields(*gpt);
  std::vector<Field> llama_only;
  for (Field& f : llama_option_fields(*llama))
    if (!has_field(gpt_fields, f.name)) llama_only.push_back(std::move(f));
  add_train_flags(cmd, *flags, gpt_fields);
  for (const Field& f : llama_only) add_field(cmd, f);
  return [cmd, gpt, llama, arch, config, flags]() {
    collect_given(cmd, *flags, gpt_option_fields(*gpt));
    std::vector<Field> llama_fields = llama_option_fields(*llama);
    std::vector<std::string>& given = flags->control.given;
    for (const Field& f : llama_fields)
      if (!has_field(gpt_option_fields(*gpt), f.name) && field_given(cmd, f)) given.push_back(f.name);
    const bool arch_given = cmd->count("--arch") > 0;
    if (!arch_given && !flags->control.resume.empty()) *arch = model_arch(flags->control.resume);
    if (!arch_given && !gpt->init_from.empty()) *arch = model_arch(gpt->init_from);
    // The flags of the other architecture are refused, naming --arch.
    const std::vector<Field> mine = *arch == "llama" ? llama_fields : gpt_option_fields(*gpt);
    for (const std::string& name : given)
      if (!has_field(mine, name))
        throw Error("--" + name + " is not an option of --arch " + *arch +
                    (*arch == "gpt2" ? " (it is --arch llama's)" : " (it is --arch gpt2's)"));
    if (*arch == "llama") {  // the shared flags were parsed into the GPT's options: copy them over
      const std::vector<Field> from = gpt_option_fields(*gpt);
      for (const std::string& name : given)
        if (const Field* f = find_field(from, name)) copy_value(*f, *find_field(llama_fields, name));
    }
    if (!config->empty()) {
      const std::vector<Field> fields = *arch == "llama" ? llama_option_fields(*llama) : gpt_option_fields(*gpt);
      for (const std::string& name : apply_options_file(fields, *config, given))
        if (std::find(given.begin(), given.end(), name) == given.end()) given.push_back(name);
    }
    const std::string& out = *arch == "llama" ? llama->out : gpt->out;
    return run_train_command(*flags, out, [&](std::FILE* log, const RunControl& control) {
      return *arch == "llama" ? train_llama(*llama, log, control) : train_gpt(*gpt, log, control);
    });
  };
}

}  // namespace potop::cli
