// Parameter layout: names and shapes of the Hugging Face GPT-2 checkpoint.
#include <string>

#include "model/gpt.h"

namespace potop {

Layout gpt_parameter_layout(const GPTConfig& c) {
  const int64_t C = c.n_embd;
  Layout layout;
  layout.add("wte.weight", {c.vocab_size, C});
  if (c.positions == PositionEncoding::kLearned) layout.add("wpe.weight", {c.block_size, C});
  auto add = [&](const std::string& name, Shape weight_shape, bool has_bias) {
    layout.add(name + ".weight", weight_shape);
    if (has_bias && c.bias) layout.add(name + ".bias", {weight_shape.back()});
  };
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    add(h + "ln_1", {C}, true);
    add(h + "attn.c_attn", {C, 3 * C}, true);
    add(h + "attn.c_proj", {C, C}, true);
    add(h + "ln_2", {C}, true);
    add(h + "mlp.c_fc", {C, 4 * C}, true);
    add(h + "mlp.c_proj", {4 * C, C}, true);
  }
  if (c.norm == NormPlacement::kPre) add("ln_f", {C}, true);
  return layout;
}

bool is_decayed_parameter(const TensorSpec& spec) { return spec.shape.size() >= 2; }

GPTParams bind_gpt_params(const GPTConfig& c, const Layout& layout, const Arena& arena) {
  auto at = [&](const std::string& name) -> float* {
    const TensorSpec* s = layout.find(name);
    return s ? arena.at(*s) : nullptr;
  };
  GPTParams p{};
  p.wte = at("wte.weight");
  p.wpe = at("wpe.weight");
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    p.h.push_back(BlockParams{
        at(h + "ln_1.weight"), at(h + "ln_1.bias"), at(h + "attn.c_attn.weight"), at(h + "attn.c_attn.bias"),
        at(h + "attn.c_proj.weight"), at(h + "attn.c_proj.bias"), at(h + "ln_2.weight"), at(h + "ln_2.bias"),
        at(h + "mlp.c_fc.weight"), at(h + "mlp.c_fc.bias"), at(h + "mlp.c_proj.weight"), at(h + "mlp.c_proj.bias")});
  }
  p.lnf_w = at("ln_f.weight");
  p.lnf_b = at("ln_f.bias");
  return p;
}

}  // namespace potop
