// `potop export`: a trained model in another program's format, through its kind's writers
// (nn/model_kind.h). --format gguf writes a GPT as llama.cpp's gpt2 architecture
// (models/gpt/gpt_gguf.h) and a Llama as its llama (models/llama/llama_gguf.h), with f32, f16,
// q8_0 or q4_0 weights (docs/export.md); --format hf writes a Hugging Face GPT-2 or Llama directory
// (models/gpt/gpt_hf_export.h, models/llama/llama_hf_export.h, docs/export-hf.md). A quantized
// model exports its matrices dequantized (and, for --type q8_0 or q4_0, quantized again).
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_args.h"
#include "core/arena.h"
#include "core/error.h"
#include "core/file_io.h"
#include "export/gguf_writer.h"

namespace potop::cli {

namespace {

// The architectures the kinds export: llama.cpp's ("gpt2 or llama"), or Hugging Face's
// ("GPT2LMHeadModel or LlamaForCausalLM").
std::string foreign_architectures(bool gguf) {
  std::string s;
  for (const ModelKind* k : model_kinds())
    if (gguf ? bool(k->export_gguf) : bool(k->export_hf))
      s += (s.empty() ? "" : " or ") + (gguf ? k->gguf_architecture : k->hf_architectures.front());
  return s;
}

struct ExportArgs {
  ModelArgs model;
  std::string format, type = "f32", out;
  bool force = false;
};

// general.name: the model directory's name (a lone weights file: its stem).
std::string model_name(const fs::path& model) {
  const fs::path p = model.filename().empty() ? model.parent_path() : model;
  return p.extension() == ".safetensors" ? p.stem().string() : p.filename().string();
}

// The model's Jinja chat template (an imported model's), which the exported files carry on.
std::string jinja_template(const LoadedModel& m) {
  const nlohmann::json& t = m.files.value("chat_template", nlohmann::json());
  return t.is_string() ? t.get<std::string>() : "";
}

int export_gguf(const ExportArgs& a) {
  parse_gguf_weight_type(a.type, "--type");
  check_output_file(a.out, "--out", a.force, {{"-m", a.model.model}, {"--checkpoint", a.model.checkpoint}});
  LoadedModel m = load_model(a.model);
  if (!m.kind->export_gguf)
    throw wrong_kind(a.model.model, *m.kind,
                     kind_nouns([](const ModelKind& k) { return bool(k.export_gguf); }) +
                         ", the kinds GGUF export holds (exporting a kind the format cannot hold)");
  const ExportResult done =
      m.kind->export_gguf(*m.model, *m.tokenizer, {a.type, model_name(a.model.model), a.out, jinja_template(m)});
  announce(m);
  for (const std::string& note : done.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  std::fprintf(stderr, "export: %s: %s\n", a.out.c_str(), done.summary.c_str());
  return 0;
}

int export_hf_dir(const ExportArgs& a, bool type_given) {
  if (type_given && a.type != "f32") throw Error("--type " + a.type + ": --format hf writes float32 weights only");
  if (a.out.empty()) throw Error("--out: give the directory to write");
  if (a.force) throw Error("--force: --format hf writes a new or empty directory and replaces nothing");
  LoadedModel m = load_model(a.model);
  if (!m.kind->export_hf)
    throw wrong_kind(a.model.model, *m.kind, kind_nouns([](const ModelKind& k) { return bool(k.export_hf); }));
  announce(m);
  const ExportResult done =
      m.kind->export_hf(*m.model, *m.tokenizer, {a.type, model_name(a.model.model), a.out, jinja_template(m)});
  std::fprintf(stderr, "export: %s: %s\n", a.out.c_str(), done.summary.c_str());
  return 0;
}

}  // namespace

Run add_export(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "export",
      "write " + kind_nouns([](const ModelKind& k) { return bool(k.export_gguf); }) +
          " in another program's format: GGUF for llama.cpp, or a Hugging Face directory");
  auto a = std::make_shared<ExportArgs>();
  add_model_options(cmd, a->model);
  cmd->add_option("--format", a->format,
                  "gguf (llama.cpp's " + foreign_architectures(true) + " architecture) or hf (a Hugging Face " +
                      foreign_architectures(false) + " directory)")
      ->required()
      ->check(CLI::IsMember({"gguf", "hf"}));
  CLI::Option* type = cmd->add_option("--type", a->type,
                                      "gguf: the weight matrices as f32, f16, q8_0 or q4_0 (norms and biases stay f32)")
      ->capture_default_str();
  cmd->add_option("-o,--out", a->out,
                  "gguf: the file to write; hf: the directory (new or empty); a failure leaves nothing");
  add_output_force(cmd, a->force, "gguf's --out");
  return [a, type]() {
    if (a->format == "hf") return export_hf_dir(*a, type->count() > 0);
    if (a->out.empty()) throw Error("--out: give the .gguf file to write");
    return export_gguf(*a);
  };
}

}  // namespace potop::cli
