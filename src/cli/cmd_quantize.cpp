// `potop quantize -m DIR --type q8_0|q4_0|f16 [--out DIR]`: a trained model of any kind with its
// attention and feed-forward matrices in llama.cpp's block formats (checkpoint/quantize_model.h).
// sample, eval, attention, serve and translate load the result like any model directory.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "checkpoint/quantize_model.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "core/arena.h"
#include "core/error.h"

namespace potop::cli {

namespace {

struct QuantizeArgs {
  ModelArgs model;
  std::string type, out;
};

}  // namespace

Run add_quantize(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "quantize", "store a trained model's matrices in 8 or 4 bits (llama.cpp's q8_0, q4_0) or f16, for generation");
  auto a = std::make_shared<QuantizeArgs>();
  add_model_options(cmd, a->model);
  cmd->add_option("--type", a->type,
                  "f16 (16 bits per weight), q8_0 (8.5: blocks of 32 int8 and a scale) or q4_0 (4.5: 32 4-bit and a "
                  "scale)")
      ->type_name("TYPE")
      ->required();
  cmd->add_option("--out", a->out, "where to write it (default: the model's path with -TYPE appended); must not exist");
  return [a]() {
    const QuantType type = parse_quant_type(a->type, "--type");
    const fs::path out = a->out.empty() ? default_quantized_path(a->model.model, type) : fs::path(a->out);
    if (fs::exists(out)) throw Error("--out " + out.string() + ": exists; remove it or choose another --out");
    LoadedModel model = load_model(a->model);
    ParameterSet& params = model.model->parameters();
    if (params.any_quantized())
      throw Error("-m " + a->model.model + ": is quantized already (" + params.quantization() +
                  "); quantize the float model it came from");
    const auto& specs = params.layout().specs();
    if (std::none_of(specs.begin(), specs.end(), [](const TensorSpec& s) { return s.matrix; }))
      throw Error("-m " + a->model.model + ": " + model.kind->noun +
                  " has no attention or feed-forward matrices, which are what potop quantizes");
    announce(model);
    const QuantizeReport report = quantize_matrices(params, type);
    if (report.matrices == 0)
      throw Error("-m " + a->model.model + ": no matrix has inputs in whole blocks of " + std::to_string(kQuantBlock) +
                  ", so nothing can be " + to_string(type) + " (use f16, or a wider model)");
    for (const std::string& kept : report.kept) std::fprintf(stderr, "kept float32: %s\n", kept.c_str());
    write_quantized_model(model, a->model.model, out, type);
    std::fprintf(stderr, "quantized %d matrices to %s (%s; embeddings, norm weights and biases stay float32): %s -> %s\n",
                 report.matrices, to_string(type).c_str(), quant_isa_name(), format_bytes(report.bytes_before).c_str(),
                 format_bytes(report.bytes_after).c_str());
    std::printf("%s\n", out.string().c_str());
    return 0;
  };
}

}  // namespace potop::cli
