// A potop Llama as a Hugging Face LlamaForCausalLM directory (see llama_hf_export.h).
#include "models/llama/llama_hf_export.h"

#include <nlohmann/json.hpp>
#include <string>

#include "core/decimal.h"
#include "core/error.h"
#include "core/file_io.h"
#include "models/llama/llama_tensors.h"

namespace potop {

namespace fs = std::filesystem;

namespace {

using ojson = nlohmann::ordered_json;

ojson config_json(const LlamaConfig& c, const Tokenizer& tokenizer) {
  ojson j;
  j["architectures"] = {"LlamaForCausalLM"};
  j["model_type"] = "llama";
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.n_embd;
  j["intermediate_size"] = c.ffn_hidden;
  j["num_hidden_layers"] = c.n_layer;
  j["num_attention_heads"] = c.n_head;
  j["num_key_value_heads"] = c.n_kv_head;
  j["head_dim"] = c.head_size();
  j["hidden_act"] = "silu";
  j["max_position_embeddings"] = c.block_size;
  j["initializer_range"] = 0.02;
  j["rms_norm_eps"] = as_written(c.norm_eps);
  j["rope_theta"] = as_written(c.rope_theta);
  j["rope_scaling"] = nullptr;
  j["attention_bias"] = false;
  j["attention_dropout"] = as_written(c.dropout);  // potop also drops sub-layer outputs; HF's Llama has no such dropout
  j["mlp_bias"] = false;
  j["pretraining_tp"] = 1;
  j["use_cache"] = true;
  add_special_ids(j, tokenizer);
  j["tie_word_embeddings"] = c.tie_embeddings;
  j["torch_dtype"] = "float32";
  j["potop"] = {{"model", ojson::parse(to_json(c).dump())}, {"tokenizer", tokenizer.kind()}};
  return j;
}

}  // namespace

void export_hf(const Llama& model, const Tokenizer& tokenizer, const fs::path& out_dir, const std::string& chat_template) {
  const LlamaConfig& c = model.config();
  check_hf_tokenizer(tokenizer);
  if (tokenizer.size() != c.vocab_size)
    throw Error("vocab_size: the model has " + std::to_string(c.vocab_size) + " tokens, its tokenizer " +
                std::to_string(tokenizer.size()));
  write_hf_directory(out_dir, [&](const fs::path& tmp) {
    write_hf_safetensors(tmp / "model.safetensors", decoder_hf_tensors(model, llama_tensor_table()));
    write_file_atomic(tmp / "config.json", hf_json_text(config_json(c, tokenizer)));
    write_hf_generation_config(tokenizer, c.block_size, tmp);
    write_hf_tokenizer_files(tokenizer, c.block_size, tmp, chat_template);
  });
}

}  // namespace potop
