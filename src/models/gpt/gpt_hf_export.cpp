// A potop GPT as a Hugging Face GPT-2 directory (see gpt_hf_export.h and docs/export-hf.md).
#include "models/gpt/gpt_hf_export.h"

#include <string>
#include <vector>

#include "core/decimal.h"
#include "core/error.h"
#include "core/file_io.h"
#include "export/hf_files.h"
#include "models/gpt/gpt_tensors.h"

namespace potop {

namespace {

// What the directory is written from: the GPT, its config and its tokenizer.
struct HfSource {
  const GPTConfig& config;
  const GPT* model;
  const Tokenizer* tokenizer;
};

using ojson = nlohmann::ordered_json;

// Refuses, in one line naming the field, what a GPT2LMHeadModel cannot compute.
void check_maps(const GPTConfig& c, const Tokenizer& tokenizer) {
  if (c.norm != NormPlacement::kPre)
    throw Error("norm: a " + to_string(c.norm) +
                "-LN model cannot be written as a GPT2LMHeadModel, which is pre-LN (LayerNorm before attention "
                "and the MLP, a final ln_f); only --norm pre models can be exported to Hugging Face");
  if (c.activation == Activation::kRelu)
    throw Error("activation: a relu model cannot be written as a GPT2LMHeadModel, whose MLP is GELU (gelu_new or "
                "gelu); only --activation gelu or gelu-erf models can be exported to Hugging Face");
  if (c.token_types > 0 || c.embedding_norm)
    throw Error(std::string(c.token_types > 0 ? "token_types" : "embedding_norm") +
                ": a GPT2LMHeadModel has no segment table and no LayerNorm on its embeddings (BERT's); this model "
                "cannot be exported to Hugging Face");
  check_hf_tokenizer(tokenizer);
  if (tokenizer.size() != c.vocab_size)
    throw Error("vocab_size: the model has " + std::to_string(c.vocab_size) + " tokens, its tokenizer " +
                std::to_string(tokenizer.size()));
}

ojson config_json(const HfSource& m) {
  const GPTConfig& c = m.config;
  ojson j;
  j["architectures"] = {"GPT2LMHeadModel"};
  j["model_type"] = "gpt2";
  j["vocab_size"] = c.vocab_size;
  j["n_positions"] = c.block_size;
  j["n_ctx"] = c.block_size;
  j["n_embd"] = c.n_embd;
  j["n_layer"] = c.n_layer;
  j["n_head"] = c.n_head;
  j["n_inner"] = 4 * c.n_embd;
  // potop's gelu is the tanh approximation (Hugging Face's gelu_new), gelu-erf the exact one ("gelu").
  j["activation_function"] = c.activation == Activation::kGeluErf ? "gelu" : "gelu_new";
  j["resid_pdrop"] = c.dropout;
  j["embd_pdrop"] = c.dropout;
  j["attn_pdrop"] = c.dropout;
  j["layer_norm_epsilon"] = as_written(c.norm_eps);
  j["initializer_range"] = 0.02;
  j["scale_attn_weights"] = true;  // scores / √head_size, as potop's attention
  j["scale_attn_by_inverse_layer_idx"] = false;
  j["reorder_and_upcast_attn"] = false;
  j["use_cache"] = true;
  add_special_ids(j, *m.tokenizer);
  j["tie_word_embeddings"] = true;
  j["torch_dtype"] = "float32";
  j["potop"] = {{"model", ojson::parse(to_json(c).dump())}, {"tokenizer", m.tokenizer->kind()}};
  return j;
}

}  // namespace

void export_hf(const LoadedGpt& model, const fs::path& out_dir) {
  POTOP_CHECK(model.model && model.tokenizer, "export_hf needs a loaded model and its tokenizer");
  export_hf(*model.model, *model.tokenizer, out_dir);
}

void export_hf(const GPT& gpt, const Tokenizer& tokenizer, const fs::path& out_dir, const std::string& chat_template) {
  const HfSource model{gpt.config(), &gpt, &tokenizer};
  check_maps(model.config, *model.tokenizer);

  write_hf_directory(out_dir, [&](const fs::path& tmp) {
    write_hf_safetensors(tmp / "model.safetensors", decoder_hf_tensors(gpt, gpt2_tensor_table()));
    write_file_atomic(tmp / "config.json", hf_json_text(config_json(model)));
    write_hf_generation_config(tokenizer, model.config.block_size, tmp);
    write_hf_tokenizer_files(tokenizer, model.config.block_size, tmp, chat_template);
  });
}

}  // namespace potop
