// Pictures of a model: `potop plot` (loss curves) and `potop attention` (attention maps).
#include <cstdio>
#include <memory>

#include "checkpoint/model_dir.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/threads.h"
#include "report/attention_map.h"
#include "report/loss_plot.h"

namespace potop::cli {

Run add_plot(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("plot", "draw a run's loss curves (metrics.jsonl) as an SVG image");
  auto model = std::make_shared<std::string>(), out = std::make_shared<std::string>();
  cmd->add_option("-m,--model", *model, "model directory written by potop train")->required();
  cmd->add_option("--out", *out, "SVG file to write (default: MODEL/loss.svg)");
  return [model, out]() {
    const fs::path target = out->empty() ? fs::path(*model) / "loss.svg" : fs::path(*out);
    write_file_atomic(target, loss_curve_svg(fs::path(*model) / "metrics.jsonl"));
    std::printf("wrote %s\n", target.string().c_str());
    return 0;
  };
}

namespace {

struct AttentionArgs {
  ModelArgs model;
  std::string prompt, out;
  int layer = -1, head = -1;
};

}  // namespace

Run add_attention(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("attention", "write an HTML page of attention maps for a short text");
  auto a = std::make_shared<AttentionArgs>();
  add_model_options(cmd, a->model);
  cmd->add_option("-p,--prompt", a->prompt, "text to look at, at most block_size characters")->required();
  cmd->add_option("--out", a->out, "HTML file to write (default: attention.html beside the model)");
  cmd->add_option("--layer", a->layer, "only this layer (default: all)");
  cmd->add_option("--head", a->head, "only this head (default: all)");
  return [a]() {
    LoadedModel m = load_model(a->model);
    const std::vector<int> ids = m.tokenizer->encode(a->prompt, "--prompt");
    const std::string html = attention_html(*m.model, *m.tokenizer, ids, a->layer, a->head);
    announce(m);
    const fs::path model(a->model.model);
    const fs::path out = !a->out.empty() ? fs::path(a->out)
                         : fs::is_directory(model) ? model / "attention.html"
                                                   : model.parent_path() / "attention.html";
    write_file_atomic(out, html);
    std::printf("wrote %s\n", out.string().c_str());
    return 0;
  };
}

}  // namespace potop::cli
