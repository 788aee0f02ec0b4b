// potop train: a decoder-only language model on a text, its architecture chosen by --arch from the
// table of decoder architectures (models/decoder/decoder_trainer.h: GPT-2's decoder by default, a
// Llama-style one, ...). One flag list serves them all: a flag of one architecture that the chosen
// one lacks is refused with --arch named.
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "checkpoint/model_dir.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/train_command.h"
#include "core/error.h"
#include "models/decoder/decoder_trainer.h"
#include "train/run_options.h"

namespace potop::cli {

namespace {

// The architecture of the model a run continues (--resume) or starts from (--init-from): its
// model directory's kind; the default one when it has none.
const DecoderArch& model_arch(const std::string& model) {
  std::error_code ec;
  const fs::path dir = fs::is_directory(model, ec) ? fs::path(model) : fs::path(model).parent_path();
  try {
    const std::string kind = read_config_json(dir).value("kind", "");
    for (const DecoderArch& arch : decoder_archs())
      if (arch.kind == kind) return arch;
  } catch (const std::exception&) {
    // no readable config.json: the run kit names what is wrong with the directory
  }
  return decoder_archs().front();
}

bool has_field(const std::vector<Field>& fields, const std::string& name) { return find_field(fields, name) != nullptr; }

// Each architecture's trainer, holding its options: the flags are parsed into the first one that
// has each.
struct Trainers {
  std::vector<std::unique_ptr<ArchTrainer>> of;  // as decoder_archs()
  size_t owner(const std::string& flag) const {  // the first architecture with the flag
    for (size_t a = 0; a < of.size(); ++a)
      if (has_field(of[a]->fields(), flag)) return a;
    return 0;
  }
};

}  // namespace

Run add_train(CLI::App& app) {
  const std::vector<DecoderArch>& archs = decoder_archs();
  std::string choices, others;
  for (const DecoderArch& a : archs) {
    choices += (choices.empty() ? "" : &a == &archs.back() ? " or " : ", ") + a.name + " (" + a.summary + ")";
    if (&a != &archs.front()) others += (others.empty() ? "" : ", ") + a.name;
  }
  CLI::App* cmd = app.add_subcommand(
      "train", "train a language model on a text file (one token per character, or --tokenizer DIR): GPT-2's decoder "
               "or, with --arch, another architecture (" + others + "); or resume a run");
  auto trainers = std::make_shared<Trainers>();
  for (const DecoderArch& a : archs) trainers->of.push_back(a.trainer());
  auto arch = std::make_shared<std::string>(archs.front().name);
  auto config = std::make_shared<std::string>();
  auto flags = std::make_shared<TrainFlags>();
  std::vector<std::string> arch_names;
  for (const DecoderArch& a : archs) arch_names.push_back(a.name);
  cmd->add_option("--arch", *arch, choices + "; a resumed or fine-tuned model keeps its own")
      ->check(CLI::IsMember(arch_names))
      ->capture_default_str();
  cmd->add_option("--config", *config, "JSON file of options (keys like n_layer); flags override it")
      ->check(CLI::ExistingFile);
  // The first architecture's flags, then each other's that no architecture before it has.
  const std::vector<Field> first = trainers->of.front()->fields();
  add_train_flags(cmd, *flags, first);
  for (size_t a = 1; a < trainers->of.size(); ++a)
    for (const Field& f : trainers->of[a]->fields())
      if (trainers->owner(f.name) == a) add_field(cmd, f);
  return [cmd, trainers, arch, config, flags]() {
    collect_given(cmd, *flags, trainers->of.front()->fields());
    std::vector<std::string>& given = flags->control.given;
    for (size_t a = 1; a < trainers->of.size(); ++a)
      for (const Field& f : trainers->of[a]->fields())
        if (trainers->owner(f.name) == a && field_given(cmd, f)) given.push_back(f.name);
    const std::vector<DecoderArch>& table = decoder_archs();
    const bool arch_given = cmd->count("--arch") > 0;
    const std::string& init_from = trainers->of[trainers->owner("init-from")]->options().init_from;
    if (!arch_given && !flags->control.resume.empty()) *arch = model_arch(flags->control.resume).name;
    if (!arch_given && !init_from.empty()) *arch = model_arch(init_from).name;
    const size_t chosen = static_cast<size_t>(
        std::find_if(table.begin(), table.end(), [&](const DecoderArch& a) { return a.name == *arch; }) - table.begin());
    ArchTrainer& trainer = *trainers->of[chosen];
    const std::vector<Field> mine = trainer.fields();
    // The flags of another architecture are refused, naming --arch; the shared ones parsed into
    // another architecture's options are copied over.
    for (const std::string& name : given) {
      const size_t owner = trainers->owner(name);
      if (!has_field(mine, name))
        throw Error("--" + name + " is not an option of --arch " + *arch + " (it is --arch " + table[owner].name + "'s)");
      if (owner != chosen) copy_value(*find_field(trainers->of[owner]->fields(), name), *find_field(mine, name));
    }
    if (!config->empty())
      for (const std::string& name : apply_options_file(mine, *config, given))
        if (std::find(given.begin(), given.end(), name) == given.end()) given.push_back(name);
    return run_train_command(*flags, trainer.options().out, [&](std::FILE* log, const RunControl& control) {
      return trainer.train(log, control);
    });
  };
}

}  // namespace potop::cli
