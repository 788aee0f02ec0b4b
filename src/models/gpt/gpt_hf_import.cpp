#include "models/gpt/gpt_hf_import.h"

#include <string>

#include "models/gpt/gpt.h"
#include "models/gpt/gpt_tensors.h"

namespace potop {

namespace {

GPTConfig gpt2_config(const ForeignConfig& f, std::vector<std::string>& notes) {
  GPTConfig c;
  c.vocab_size = f.integer("vocab_size");
  c.block_size = f.integer("n_positions");
  c.n_embd = f.integer("n_embd");
  c.n_layer = f.integer("n_layer");
  c.n_head = f.integer("n_head");
  c.bias = true;
  c.norm = NormPlacement::kPre;
  c.positions = PositionEncoding::kLearned;
  const std::string act = f.string("activation_function", "gelu_new");
  if (act == "gelu_new" || act == "gelu_pytorch_tanh") c.activation = Activation::kGelu;
  else if (act == "gelu") c.activation = Activation::kGeluErf;  // exact, with erf
  else if (act == "relu") c.activation = Activation::kRelu;
  else
    throw f.refuse("activation_function", "potop's GPT computes gelu_new, gelu_pytorch_tanh, gelu (erf) and relu");
  c.norm_eps = static_cast<float>(f.number("layer_norm_epsilon", 1e-5));
  if (f.has("n_inner") && c.n_embd > 0 && f.integer("n_inner") != 4 * c.n_embd)
    throw f.refuse("n_inner", "potop's GPT has an MLP of 4 · n_embd");
  if (!f.boolean("scale_attn_weights", true))
    throw f.refuse("scale_attn_weights", "potop's attention divides scores by √head size");
  if (f.boolean("scale_attn_by_inverse_layer_idx", false))
    throw f.refuse("scale_attn_by_inverse_layer_idx", "potop's attention scales every layer alike");
  if (f.has("add_cross_attention") && f.boolean("add_cross_attention", false))
    throw f.refuse("add_cross_attention", "potop imports GPT-2 as a decoder without cross-attention");
  // Dropout matters only when the model is fine-tuned: potop has one rate, GPT-2 three.
  const double resid = f.number("resid_pdrop", 0.1);  // GPT2Config's default
  c.dropout = static_cast<float>(resid);
  if (f.number("attn_pdrop", resid) != resid || f.number("embd_pdrop", resid) != resid)
    notes.push_back("dropout: potop has one rate for GPT-2's embd_pdrop, attn_pdrop and resid_pdrop; it takes "
                    "resid_pdrop, " + nlohmann::json(resid).dump());
  c.validate(f.file());
  return c;
}

}  // namespace

ImportedModel import_gpt2_hf(const ImportRequest& r) {
  const ForeignConfig f(r.config, r.config_file);
  ImportedModel out;
  const GPTConfig c = gpt2_config(f, out.notes);
  if (c.vocab_size != r.tokenizer.size())
    throw f.refuse("vocab_size", "the tokenizer beside it has " + std::to_string(r.tokenizer.size()) + " tokens");
  ImportedModel model = imported_decoder(std::make_unique<GPT>(c), to_json(c), gpt2_tensor_table(),
                                         ForeignFormat::kHuggingFace, r.tensors, "GPT-2");
  model.notes.insert(model.notes.begin(), out.notes.begin(), out.notes.end());
  return model;
}

}  // namespace potop
