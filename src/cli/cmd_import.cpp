// `potop import SRC --out NEW`: a Hugging Face model directory (GPT-2, Llama) or a GGUF file
// (llama.cpp's gpt2, llama) as a potop model directory, which every command then takes
// (checkpoint/hf_import.h, checkpoint/gguf_import.h, docs/import.md).
#include <chrono>
#include <cstdio>
#include <memory>

#include "checkpoint/gguf_import.h"
#include "checkpoint/hf_import.h"
#include "cli/commands.h"
#include "core/error.h"
#include "generate/jinja/template.h"

namespace potop::cli {

namespace {

struct ImportArgs {
  std::string src, out;
};

int run_import(const ImportArgs& a) {
  if (a.out.empty()) throw Error("--out: give the new model directory to write");
  const auto start = std::chrono::steady_clock::now();
  const bool gguf = std::filesystem::is_regular_file(a.src);
  const ImportSummary s = gguf ? import_gguf_file(a.src, a.out) : import_hf_dir(a.src, a.out);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const std::string& note : s.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  // Said now, not first when a server starts: the template is kept as the model gave it (a later
  // potop may render it), but chats will use the plain one.
  if (!s.chat_template.empty()) try {
      const jinja::Template parsed(s.chat_template);
    } catch (const jinja::TemplateError& e) {
      std::fprintf(stderr, "note: the model's chat template is kept in config.json, but potop serve will not use it "
                           "(%s): chats will use the plain template\n", e.what());
    }
  std::fprintf(stderr, "import: %s (%s, %zu tensors, %s) -> %s: %s of %.1fM parameters; tokenizer %s; in %.1f s\n",
               a.src.c_str(), s.architecture.c_str(), s.tensors, s.dtypes.c_str(), a.out.c_str(), s.kind->noun.c_str(),
               static_cast<double>(s.parameters) / 1e6, s.tokenizer.c_str(), seconds);
  return 0;
}

}  // namespace

Run add_import(CLI::App& app) {
  std::string hf, gguf;  // what the kinds read, from the table
  for (const ModelKind* k : model_kinds()) {
    for (const std::string& arch : k->hf_architectures) hf += (hf.empty() ? "" : ", ") + arch;
    if (k->import_gguf) gguf += (gguf.empty() ? "" : ", ") + k->gguf_architecture;
  }
  CLI::App* cmd = app.add_subcommand(
      "import", "read a Hugging Face model directory (" + hf + ": config.json, model.safetensors and its tokenizer "
                "files) or a GGUF file (llama.cpp's " + gguf + "; f32, f16, bf16, q8_0, q4_0) into a new potop model "
                "directory");
  auto a = std::make_shared<ImportArgs>();
  cmd->add_option("source", a->src, "the Hugging Face directory (what huggingface-cli download writes), or a .gguf file")->required();
  cmd->add_option("-o,--out", a->out, "the potop model directory to write (new or empty); a failure leaves nothing")
      ->required();
  return [a]() { return run_import(*a); };
}

}  // namespace potop::cli
