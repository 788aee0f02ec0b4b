// `potop info`: what a model directory holds — the model, its tokenizer, how it was trained, and
// every checkpoint with its step and validation loss.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "checkpoint/model_dir.h"
#include "checkpoint/train_state.h"
#include "cli/commands.h"
#include "core/arena.h"
#include "core/error.h"
#include "core/safetensors.h"
#include "nn/model_kind.h"

namespace potop::cli {

namespace {

// What the model can do (nn/tasks.h), as its row of the kinds table says.
std::vector<std::string> task_names(const ModelKind& kind) {
  std::vector<std::string> names;
  for (const Task t : kind.tasks) names.push_back(to_string(t));
  return names;
}

// The commands of the kind's row that work on this model: a quantized one (potop quantize, or an
// imported q8_0/q4_0 file) is for inference only, so it is neither quantized again nor a start
// for training (both refuse it: cli/cmd_quantize.cpp, checkpoint/weights.cpp).
std::vector<std::string> commands_for(const ModelKind& kind, const ModelFiles& files) {
  const bool quantized = files.files.contains("quantized") && files.files["quantized"].is_string();
  std::vector<std::string> commands;
  for (const std::string& c : kind.commands)
    if (!quantized || (c != "quantize" && !c.ends_with("--init-from"))) commands.push_back(c);
  return commands;
}

struct InfoArgs {
  std::string model;
  bool json = false;
};

// The directory's checkpoints in the order a person looks for them: best, latest, the training
// state, then the --keep snapshots by step.
std::vector<fs::path> checkpoints_in(const fs::path& dir) {
  std::vector<fs::path> found, snapshots;
  for (const char* name : {"best.safetensors", "latest.safetensors", kResumeFile})
    if (fs::exists(dir / name)) found.push_back(dir / name);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("step-") && name.ends_with(".safetensors")) snapshots.push_back(entry.path());
  }
  std::sort(snapshots.begin(), snapshots.end());
  found.insert(found.end(), snapshots.begin(), snapshots.end());
  return found;
}

// The batch a run trained with: windows × micro-batches, or tokens (a translation model's batches
// hold sentences of similar lengths).
std::string batch_of(const nlohmann::json& training) {
  if (training.contains("batch_tokens")) return training["batch_tokens"].dump() + " tokens";
  return training.value("batch_size", nlohmann::json()).dump() + " × " + training.value("grad_accum", nlohmann::json(1)).dump();
}

}  // namespace

Run add_info(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("info", "what a model directory holds: the model, its tokenizer, its checkpoints");
  auto a = std::make_shared<InfoArgs>();
  // The kinds it reads are the kinds table's, named by the commands that write them.
  std::string writers;
  for (const ModelKind* kind : model_kinds()) writers += (writers.empty() ? "" : ", ") + kind->trainer;
  cmd->add_option("-m,--model", a->model, "model directory, as " + writers + " write it (not word2vec's vectors)")
      ->required();
  cmd->add_flag("--json", a->json, "print it as one JSON object");
  return [a]() {
    const fs::path dir = a->model;
    const ModelFiles files = read_model_files(dir);
    const ModelKind& kind = *files.kind;
    const size_t parameters = kind.parameter_layout(files.config).count();
    // A translation model's direction.
    const bool has_languages = files.files.contains("source") && files.files.contains("target");
    nlohmann::json checkpoints = nlohmann::json::array();
    for (const fs::path& path : checkpoints_in(dir)) {
      nlohmann::json entry = {{"file", path.filename().string()}, {"bytes", fs::file_size(path)}};
      try {
        const Metadata meta = read_safetensors_metadata(path);
        for (const char* key : {"step", "train_loss", "val_loss"})
          if (meta.count(key)) entry[key] = nlohmann::json::parse(meta.at(key), nullptr, false);
        entry["training_state"] = meta.count("potop.kind") && meta.at("potop.kind") == kTrainStateKind;
        entry["summary"] = describe_checkpoint(meta);
      } catch (const Error& e) {
        entry["error"] = e.what();
      }
      checkpoints.push_back(entry);
    }
    std::string default_choice;
    try {
      const CheckpointChoice choice = choose_checkpoint(dir, "");
      default_choice = choice.why;
      // The choice reads headers only; a checkpoint whose data is damaged was listed with its error.
      for (const nlohmann::json& e : checkpoints)
        if (e["file"] == choice.path.filename().string() && e.contains("error"))
          default_choice = "nothing: " + choice.path.string() + " does not load (" + e["error"].get<std::string>() + ")";
    } catch (const Error& e) {
      default_choice = e.what();
    }
    if (a->json) {
      nlohmann::json out = {{"model", dir.string()},
                                  {"kind", kind.name},
                                  {"description", kind.description},
                                  {"tasks", task_names(kind)},
                                  {"commands", commands_for(kind, files)},
                                  {"config", files.config},
                                  {"parameters", parameters},
                                  {"tokenizer", {{"kind", files.tokenizer->kind()}, {"size", files.tokenizer->size()}}},
                                  {"training", files.training},
                                  {"checkpoints", checkpoints},
                                  {"default_checkpoint", default_choice}};
      if (has_languages) out["source"] = files.files["source"], out["target"] = files.files["target"];
      if (files.files.contains("quantized")) out["quantized"] = files.files["quantized"];
      if (files.files.contains("imported")) out["imported"] = files.files["imported"];
      if (files.files.contains("chat_template")) out["chat_template"] = files.files["chat_template"];
      if (kind.kv_cache_per_token) out["kv_cache_bytes_per_token"] = kind.kv_cache_per_token(files.config).first;
      std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return 0;
    }
    std::printf("model: %s: %s\n", dir.string().c_str(), kind.describe(files.config).c_str());
    if (has_languages)
      std::printf("translates: %s -> %s\n", files.files.value("source", "?").c_str(), files.files.value("target", "?").c_str());
    std::printf("parameters: %zu (%s as float32)\n", parameters, format_bytes(parameters * sizeof(float)).c_str());
    if (files.files.contains("quantized") && files.files["quantized"].is_string())
      std::printf("quantized: %s (%s: attention and feed-forward matrices; for inference only)\n",
                  files.files["quantized"].get<std::string>().c_str(),
                  files.files.contains("imported") ? "as the imported file stores them" : "potop quantize");
    std::printf("tokenizer: %s, %d tokens\n", files.tokenizer->kind().c_str(), files.tokenizer->size());
    if (kind.kv_cache_per_token) {
      const auto [bytes, how] = kind.kv_cache_per_token(files.config);
      std::printf("KV cache: %s per token of context (%s, float32)\n", format_bytes(bytes).c_str(), how.c_str());
    }
    if (const nlohmann::json& im = files.files.value("imported", nlohmann::json()); im.is_object())
      std::printf("imported: %s from %s (%s tensors; potop import)\n", im.value("architecture", std::string("?")).c_str(),
                  im.value("from", std::string("?")).c_str(), im.value("dtypes", std::string("?")).c_str());
    if (const nlohmann::json& ct = files.files.value("chat_template", nlohmann::json()); ct.is_string())
      std::printf("chat template: Jinja, %zu bytes (potop chat-template %s --messages FILE shows what it writes)\n",
                  ct.get<std::string>().size(), dir.string().c_str());
    else if (ct.is_object())
      std::printf("chat template: potop's form (%s)\n", ct.value("name", std::string("custom")).c_str());
    const nlohmann::json& t = files.training;
    if (t.is_object() && t.contains("data"))
      std::printf("trained on: %s, %s steps, batch %s, lr %s\n", t.value("data", std::string("?")).c_str(),
                  t.value("steps", nlohmann::json()).dump().c_str(), batch_of(t).c_str(),
                  t.value("lr", nlohmann::json()).dump().c_str());
    std::printf("checkpoints:\n");
    for (const nlohmann::json& e : checkpoints) {
      const std::string what = e.contains("error") ? e["error"].get<std::string>() : e["summary"].get<std::string>();
      std::printf("  %-26s %-36s %10s%s\n", e["file"].get<std::string>().c_str(), what.c_str(),
                  format_bytes(e["bytes"].get<size_t>()).c_str(),
                  e.value("training_state", false) ? "  (training state)" : "");
    }
    if (checkpoints.empty()) std::printf("  (none)\n");
    std::string tasks;
    for (const std::string& name : task_names(kind)) tasks += (tasks.empty() ? "" : ", ") + name;
    std::printf("tasks: %s\n", tasks.c_str());
    std::string commands;
    for (const std::string& c : commands_for(kind, files)) commands += (commands.empty() ? "potop " : ", potop ") + c;
    std::printf("commands: %s\n", commands.c_str());
    std::printf("they load: %s\n", default_choice.c_str());
    return 0;
  };
}

}  // namespace potop::cli
