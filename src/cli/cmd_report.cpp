// Pictures of a model: `potop plot` (loss curves) and `potop attention` (attention maps).
#include <cstdio>
#include <memory>

#include "checkpoint/model_dir.h"
#include "cli/bow_attention.h"
#include "cli/translation_pages.h"
#include "cli/commands.h"
#include "cli/flags.h"
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
  auto force = std::make_shared<bool>(false);
  cmd->add_option("-m,--model", *model, "a run's model directory (any kind)")->required();
  cmd->add_option("--out", *out, "SVG file to write (default: MODEL/loss.svg, potop's own, replaced)");
  add_output_force(cmd, *force, "--out");
  return [model, out, force]() {
    if (!out->empty()) check_output_file(*out, "--out", *force);
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
  bool force = false;
};

// Writes the page to --out (default: attention.html beside the model) and says where.
template <class Loaded>
int write_attention_page(const std::string& html, const Loaded& m, const std::string& out_flag, const fs::path& dir) {
  announce(m);
  const fs::path out = !out_flag.empty() ? fs::path(out_flag) : dir / "attention.html";
  write_file_atomic(out, html);
  std::printf("wrote %s\n", out.string().c_str());
  return 0;
}

}  // namespace

Run add_attention(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("attention", "write an HTML page of attention maps for a short text (a Transformer: per layer and head; a bag-of-words LM: "
      "its weights on the earlier words, also printed as a table; a translation model: the cross-attention of "
      "the text and its greedy translation)");
  auto a = std::make_shared<AttentionArgs>();
  add_model_options(cmd, a->model);
  cmd->add_option("-p,--prompt", a->prompt, "text to look at, at most block_size characters")->required();
  cmd->add_option("--out", a->out, "HTML file to write (default: attention.html beside the model, potop's own, replaced)");
  add_output_force(cmd, a->force, "--out");
  cmd->add_option("--layer", a->layer, "only this layer (default: all)");
  cmd->add_option("--head", a->head, "only this head (default: all)");
  return [a]() {
    if (!a->out.empty())
      check_output_file(a->out, "--out", a->force, {{"-m", a->model.model}, {"--checkpoint", a->model.checkpoint}});
    LoadedModel loaded = load_model(a->model);
    const fs::path model(a->model.model);
    const fs::path dir = fs::is_directory(model) ? model : model.parent_path();
    Model& net = *loaded.model;
    if (WordAttention* words = task<WordAttention>(net))  // its weights on the earlier words, as bow attention
      return print_word_attention(*words, *loaded.tokenizer, loaded.weights.string(), loaded.choice, a->prompt,
                                  !a->out.empty() ? a->out : (dir / "attention.html").string());
    if (Seq2Seq* s2s = task<Seq2Seq>(net)) {  // the decoder's attention on the source, as translate attention
      write_cross_attention(*s2s, *loaded.tokenizer, a->prompt, "", a->layer,
                            !a->out.empty() ? fs::path(a->out) : dir / "cross-attention.html");
      return 0;
    }
    SelfAttention* self = task<SelfAttention>(net);
    if (!self) throw wrong_kind(a->model.model, *loaded.kind, "a model with attention maps");
    const AttentionRow row = self->attention_row(*loaded.tokenizer, a->prompt, "--prompt");
    const std::string html = attention_html(self_attention_maps(*self, *loaded.tokenizer), row.ids, a->layer, a->head);
    return write_attention_page(html, loaded, a->out, dir);
  };
}

}  // namespace potop::cli
