#include "models/gpt/gpt_gguf_import.h"

#include <string>

#include "kernels/layernorm.h"
#include "models/gpt/gpt.h"
#include "models/gpt/gpt_gguf.h"

namespace potop {

namespace {

GPTConfig gpt2_gguf_config(const ForeignConfig& f) {
  GPTConfig c;
  c.block_size = f.integer("gpt2.context_length");
  c.n_embd = f.integer("gpt2.embedding_length");
  c.n_layer = f.integer("gpt2.block_count");
  c.n_head = f.integer("gpt2.attention.head_count");
  c.bias = true;
  c.norm = NormPlacement::kPre;
  c.activation = Activation::kGelu;
  c.positions = PositionEncoding::kLearned;
  c.dropout = 0.0f;
  if (f.has("gpt2.feed_forward_length") && c.n_embd > 0 && f.integer("gpt2.feed_forward_length") != 4 * c.n_embd)
    throw f.refuse("gpt2.feed_forward_length", "potop's GPT has an MLP of 4 · embedding_length");
  c.norm_eps = static_cast<float>(f.number("gpt2.attention.layer_norm_epsilon", kLayerNormEps));
  return c;
}

}  // namespace

ImportedModel import_gpt2_gguf(const ImportRequest& r) {
  const ForeignConfig f(r.config, r.config_file);
  GPTConfig c = gpt2_gguf_config(f);
  c.vocab_size = r.tokenizer.size();
  c.validate(f.file());
  auto gpt = std::make_unique<GPT>(c);
  ParameterFiller fill(gpt->parameters(), r.tensors);
  fill.same("wte.weight", "token_embd.weight");
  fill.same("wpe.weight", "position_embd.weight");
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".", blk = "blk." + std::to_string(l) + ".";
    for (const Gpt2GgufPart& part : kGpt2GgufBlock) {
      const std::string from = blk + part.gguf, to = h + part.potop;
      if (part.linear) fill.linear(to + ".weight", from + ".weight");
      else fill.same(to + ".weight", from + ".weight");
      fill.same(to + ".bias", from + ".bias");
    }
  }
  fill.same("ln_f.weight", "output_norm.weight");
  fill.same("ln_f.bias", "output_norm.bias");
  if (r.tensors.has("output.weight")) fill.equal("wte.weight", "output.weight");
  fill.finish("llama.cpp's gpt2");
  ImportedModel out;
  out.notes = fill.notes();
  out.config = to_json(c);
  out.model = std::move(gpt);
  return out;
}

}  // namespace potop
