// A potop GPT as a Hugging Face GPT-2 directory (see gpt_hf_export.h and docs/export-hf.md).
#include "models/gpt/gpt_hf_export.h"

#include <string>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "core/file_io.h"
#include "core/safetensors.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"
#include "tokenizer/byte_tokenizer.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/utf8.h"

namespace potop {

namespace {

// What the directory is written from: the GPT, its config and its tokenizer.
struct HfSource {
  const GPTConfig& config;
  const GPT* model;
  const Tokenizer* tokenizer;
};

using ojson = nlohmann::ordered_json;

// GPT-2's LayerNorm eps is written as 1e-5: the value potop's kernels use.
static_assert(kLayerNormEps == 1e-5f, "config.json's layer_norm_epsilon must follow kLayerNormEps");
constexpr double kLayerNormEpsilon = 1e-5;

// One tensor of model.safetensors, owning its values.
struct HfTensor {
  std::string name;
  Shape shape;
  std::vector<float> values;
};

class TensorCollector {
 public:
  explicit TensorCollector(const ParameterSet& params) : params_(params) {}

  // potop's tensor `name` as `hf_name`; its shape must be `shape` (GPT-2's).
  void add(const std::string& hf_name, const std::string& name, const Shape& shape) {
    const TensorSpec* spec = params_.layout().find(name);
    if (!spec) throw Error("model: tensor " + name + " is missing, so the model cannot be written as GPT-2's " + hf_name);
    if (spec->shape != shape)
      throw Error("model: tensor " + name + " is " + shape_string(spec->shape) + ", GPT-2's " + hf_name + " is " +
                  shape_string(shape));
    const auto id = static_cast<ParamId>(spec - params_.layout().specs().data());
    tensors_.push_back({hf_name, shape, params_.dense_values(id)});
  }
  // A bias: potop's when the model has biases, else zeros (the same function: x·W + 0 = x·W).
  void add_bias(const std::string& hf_name, const std::string& name, int64_t size, bool has_bias) {
    if (has_bias) add(hf_name, name, {size});
    else tensors_.push_back({hf_name, {size}, std::vector<float>(static_cast<size_t>(size), 0.0f)});
  }
  void add_values(const std::string& hf_name, const Shape& shape, std::vector<float> values) {
    tensors_.push_back({hf_name, shape, std::move(values)});
  }
  const std::vector<HfTensor>& tensors() const { return tensors_; }

 private:
  const ParameterSet& params_;
  std::vector<HfTensor> tensors_;
};

// Refuses, in one line naming the field, what a GPT2LMHeadModel cannot compute.
void check_maps(const GPTConfig& c, const Tokenizer& tokenizer) {
  if (c.norm != NormPlacement::kPre)
    throw Error("norm: a " + to_string(c.norm) +
                "-LN model cannot be written as a GPT2LMHeadModel, which is pre-LN (LayerNorm before attention "
                "and the MLP, a final ln_f); only --norm pre models can be exported to Hugging Face");
  if (c.activation != Activation::kGelu)
    throw Error("activation: a " + to_string(c.activation) +
                " model cannot be written as a GPT2LMHeadModel, whose MLP is GELU (gelu_new); only --activation gelu "
                "models can be exported to Hugging Face");
  const std::string kind = tokenizer.kind();
  if (kind != "char" && kind != "byte" && kind != "bpe" && kind != "unigram")
    throw Error("tokenizer: a " + kind +
                " tokenizer has no Hugging Face equivalent (potop's word splitting and lowercasing); models with a "
                "char, byte, bpe or unigram tokenizer can be exported");
  if (tokenizer.size() != c.vocab_size)
    throw Error("vocab_size: the model has " + std::to_string(c.vocab_size) + " tokens, its tokenizer " +
                std::to_string(tokenizer.size()));
}

std::vector<HfTensor> gpt2_tensors(const HfSource& m) {
  const GPTConfig& c = m.config;
  const int64_t C = c.n_embd, V = c.vocab_size, T = c.block_size;
  TensorCollector out(m.model->parameters());
  out.add("transformer.wte.weight", "wte.weight", {V, C});
  if (c.positions == PositionEncoding::kLearned) {
    out.add("transformer.wpe.weight", "wpe.weight", {T, C});
  } else {  // the fixed table potop adds, from the function its embedding layer calls
    std::vector<float> table(static_cast<size_t>(T * C));
    sinusoidal_positions(table.data(), c.block_size, c.n_embd);
    out.add_values("transformer.wpe.weight", {T, C}, std::move(table));
  }
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = "h." + std::to_string(l) + ".", hf = "transformer." + p;
    out.add(hf + "ln_1.weight", p + "ln_1.weight", {C});
    out.add_bias(hf + "ln_1.bias", p + "ln_1.bias", C, c.bias);
    out.add(hf + "attn.c_attn.weight", p + "attn.c_attn.weight", {C, 3 * C});
    out.add_bias(hf + "attn.c_attn.bias", p + "attn.c_attn.bias", 3 * C, c.bias);
    out.add(hf + "attn.c_proj.weight", p + "attn.c_proj.weight", {C, C});
    out.add_bias(hf + "attn.c_proj.bias", p + "attn.c_proj.bias", C, c.bias);
    out.add(hf + "ln_2.weight", p + "ln_2.weight", {C});
    out.add_bias(hf + "ln_2.bias", p + "ln_2.bias", C, c.bias);
    out.add(hf + "mlp.c_fc.weight", p + "mlp.c_fc.weight", {C, 4 * C});
    out.add_bias(hf + "mlp.c_fc.bias", p + "mlp.c_fc.bias", 4 * C, c.bias);
    out.add(hf + "mlp.c_proj.weight", p + "mlp.c_proj.weight", {4 * C, C});
    out.add_bias(hf + "mlp.c_proj.bias", p + "mlp.c_proj.bias", C, c.bias);
  }
  out.add("transformer.ln_f.weight", "ln_f.weight", {C});
  out.add_bias("transformer.ln_f.bias", "ln_f.bias", C, c.bias);
  return out.tensors();
}

// Whether the tokenizer has potop's special tokens (<pad> 0, <bos> 1, <eos> 2, <unk> 3): all but char.
bool has_specials(const Tokenizer& tokenizer) { return tokenizer.kind() != "char"; }

ojson config_json(const HfSource& m) {
  const GPTConfig& c = m.config;
  const bool specials = has_specials(*m.tokenizer);
  const ojson bos = specials ? ojson(kBosId) : ojson(nullptr), eos = specials ? ojson(kEosId) : ojson(nullptr);
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
  j["activation_function"] = "gelu_new";  // potop's GELU is the tanh approximation (kernels/activation.cpp)
  j["resid_pdrop"] = c.dropout;
  j["embd_pdrop"] = c.dropout;
  j["attn_pdrop"] = c.dropout;
  j["layer_norm_epsilon"] = kLayerNormEpsilon;
  j["initializer_range"] = 0.02;
  j["scale_attn_weights"] = true;  // scores / √head_size, as potop's attention
  j["scale_attn_by_inverse_layer_idx"] = false;
  j["reorder_and_upcast_attn"] = false;
  j["use_cache"] = true;
  j["bos_token_id"] = bos;
  j["eos_token_id"] = eos;
  if (specials) j["pad_token_id"] = kPadId;
  j["tie_word_embeddings"] = true;
  j["torch_dtype"] = "float32";
  j["potop"] = {{"model", ojson::parse(to_json(c).dump())}, {"tokenizer", m.tokenizer->kind()}};
  return j;
}

ojson generation_config_json(const HfSource& m) {
  ojson j;
  if (has_specials(*m.tokenizer)) {
    j["bos_token_id"] = kBosId;
    j["eos_token_id"] = kEosId;
    j["pad_token_id"] = kPadId;
  }
  j["max_length"] = m.config.block_size;  // learned positions end at n_positions
  return j;
}

// GPT-2's byte-level alphabet: byte b as a printable code point — itself for the printable
// Latin-1 bytes (33..126, 161..172, 174..255), 256 + n for the n-th other byte.
std::vector<std::string> byte_level_alphabet() {
  std::vector<std::string> out(256);
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    out[static_cast<size_t>(b)] = utf8_encode(static_cast<char32_t>(printable ? b : 256 + n++));
  }
  return out;
}

ojson added_token(int id, const std::string& content) {
  return {{"id", id},          {"content", content}, {"single_word", false}, {"lstrip", false},
          {"rstrip", false},   {"normalized", false}, {"special", true}};
}

ojson bpe_model(const ojson& vocab) {
  return {{"type", "BPE"},           {"dropout", nullptr},         {"unk_token", nullptr},
          {"continuing_subword_prefix", nullptr}, {"end_of_word_suffix", nullptr}, {"fuse_unk", false},
          {"byte_fallback", false},  {"vocab", vocab},             {"merges", ojson::array()}};
}

ojson tokenizer_json(ojson added, ojson pre_tokenizer, ojson decoder, ojson model) {
  ojson j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  j["added_tokens"] = std::move(added);
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = std::move(pre_tokenizer);
  j["post_processor"] = nullptr;  // potop adds no <bos> or <eos> when it encodes
  j["decoder"] = std::move(decoder);
  j["model"] = std::move(model);
  return j;
}

ojson tokenizer_config(const std::string& tokenizer_class, const HfSource& m) {
  ojson j;
  j["tokenizer_class"] = tokenizer_class;
  j["model_max_length"] = m.config.block_size;
  j["clean_up_tokenization_spaces"] = false;
  if (has_specials(*m.tokenizer)) {
    j["pad_token"] = kSpecialPieces[kPadId];
    j["bos_token"] = kSpecialPieces[kBosId];
    j["eos_token"] = kSpecialPieces[kEosId];
    j["unk_token"] = kSpecialPieces[kUnkId];
  }
  return j;
}

std::string dump(const ojson& j) { return j.dump(2) + "\n"; }

void write_tokenizer_files(const HfSource& m, const fs::path& dir) {
  const Tokenizer& t = *m.tokenizer;
  if (const auto* chars = dynamic_cast<const CharTokenizer*>(&t)) {
    // One token per code point: a BPE without merges over the characters themselves (not GPT-2's
    // bytes, whose pieces the vocabulary lacks), the whole text one word, tokens joined by Fuse.
    ojson vocab = ojson::object();
    for (int id = 0; id < chars->size(); ++id) vocab[utf8_encode(chars->char_of(id))] = id;
    write_file_atomic(dir / "tokenizer.json",
                      dump(tokenizer_json(ojson::array(), nullptr, {{"type", "Fuse"}}, bpe_model(vocab))));
    write_file_atomic(dir / "tokenizer_config.json", dump(tokenizer_config("PreTrainedTokenizerFast", m)));
  } else if (dynamic_cast<const ByteTokenizer*>(&t)) {
    // The specials, then byte b as id 4 + b: GPT-2's byte-level BPE with no merges.
    const std::vector<std::string> alphabet = byte_level_alphabet();
    ojson vocab = ojson::object(), added = ojson::array();
    for (int id = 0; id < kSpecialCount; ++id) {
      vocab[kSpecialPieces[id]] = id;
      added.push_back(added_token(id, kSpecialPieces[id]));
    }
    for (int b = 0; b < 256; ++b) vocab[alphabet[static_cast<size_t>(b)]] = ByteTokenizer::kFirstByteId + b;
    const ojson byte_level = {
        {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}};
    write_file_atomic(dir / "tokenizer.json", dump(tokenizer_json(added, byte_level, byte_level, bpe_model(vocab))));
    write_file_atomic(dir / "vocab.json", vocab.dump() + "\n");  // GPT2Tokenizer's files
    write_file_atomic(dir / "merges.txt", "#version: 0.2\n");
    write_file_atomic(dir / "tokenizer_config.json", dump(tokenizer_config("PreTrainedTokenizerFast", m)));
  } else if (const auto* sp = dynamic_cast<const SentencePieceTokenizer*>(&t)) {
    // SentencePiece's own model, for a SentencePiece-based tokenizer class: encoded with
    // sp_model.encode (legacy), no <bos> or <eos> added.
    write_file_atomic(dir / "tokenizer.model", sp->model());
    ojson j = tokenizer_config("LlamaTokenizer", m);
    j["add_bos_token"] = false;
    j["add_eos_token"] = false;
    j["legacy"] = true;
    j["add_prefix_space"] = false;
    j["sp_model_kwargs"] = ojson::object();
    write_file_atomic(dir / "tokenizer_config.json", dump(j));
  } else {
    POTOP_CHECK(false, "check_maps let through a tokenizer of kind " + t.kind());
  }
}

void write_safetensors_file(const fs::path& path, const std::vector<HfTensor>& tensors) {
  std::vector<SafetensorsEntry> entries;
  entries.reserve(tensors.size());
  for (const HfTensor& t : tensors) entries.push_back({t.name, Dtype::F32, t.shape, t.values.data()});
  // transformers refuses a safetensors file whose metadata lacks format "pt".
  write_safetensors(path, entries, {{"format", "pt"}});
}

}  // namespace

void export_hf(const LoadedGpt& model, const fs::path& out_dir) {
  POTOP_CHECK(model.model && model.tokenizer, "export_hf needs a loaded model and its tokenizer");
  export_hf(*model.model, *model.tokenizer, out_dir);
}

void export_hf(const GPT& gpt, const Tokenizer& tokenizer, const fs::path& out_dir) {
  const HfSource model{gpt.config(), &gpt, &tokenizer};
  check_maps(model.config, *model.tokenizer);

  fs::path out = out_dir.has_filename() ? out_dir : out_dir.parent_path();  // "out/" is "out"
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(out, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) throw Error(out.string() + ": exists and is not a directory");
    if (!fs::is_empty(out, ec) || ec)
      throw Error(out.string() + ": already exists and is not empty; export writes a new directory");
  }
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) throw Error(parent.string() + ": cannot create the directory: " + ec.message());

  write_directory_atomic(out, [&](const fs::path& tmp) {
    write_safetensors_file(tmp / "model.safetensors", gpt2_tensors(model));
    write_file_atomic(tmp / "config.json", dump(config_json(model)));
    write_file_atomic(tmp / "generation_config.json", dump(generation_config_json(model)));
    write_tokenizer_files(model, tmp);
  });
}

}  // namespace potop
