// `potop export` of a decoder kind, the part every kind's row shares (nn/model_kind.h's
// export_gguf and export_hf): the --type, the chat template, the file written and the summary
// line. The kind brings its writer (its GGUF architecture, its Hugging Face directory).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "core/arena.h"
#include "export/gguf_writer.h"
#include "nn/model_kind.h"
#include "tokenizer/tokenizer.h"

namespace potop {

template <class M>
using GgufWrite = GgufWriter (*)(const M& model, const Tokenizer& tokenizer, GgmlType weights, const std::string& name,
                                 std::vector<std::string>& notes);
template <class M>
using HfWrite = void (*)(const M& model, const Tokenizer& tokenizer, const std::filesystem::path& out,
                         const std::string& chat_template);

// llama.cpp's `architecture`, written by `write`.
template <class M>
ExportResult export_gguf_file(const Model& model, const Tokenizer& tokenizer, const ExportRequest& r, GgufWrite<M> write,
                              const std::string& architecture) {
  ExportResult out;
  const GgmlType weights = parse_gguf_weight_type(r.type, "--type");
  GgufWriter w = write(dynamic_cast<const M&>(model), tokenizer, weights, r.name, out.notes);
  if (!r.chat_template.empty()) w.add_string("tokenizer.chat_template", r.chat_template);
  w.write(r.out);
  out.summary = "llama.cpp " + architecture + ", " + to_string(weights) + " weights, " +
                std::to_string(w.tensor_count()) + " tensors, " + format_bytes(w.file_bytes());
  return out;
}

// A Hugging Face directory, written by `write`; `what` is the summary ("a Hugging Face Llama
// directory (LlamaForCausalLM)").
template <class M>
ExportResult export_hf_directory(const Model& model, const Tokenizer& tokenizer, const ExportRequest& r, HfWrite<M> write,
                                 const std::string& what) {
  write(dynamic_cast<const M&>(model), tokenizer, r.out, r.chat_template);
  return {{}, what};
}

}  // namespace potop
