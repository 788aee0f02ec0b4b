#include "checkpoint/hf_import.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "checkpoint/model_dir.h"
#include "checkpoint/weights.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/safetensors.h"
#include "kernels/quant.h"
#include "tokenizer/byte_bpe_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/wordpiece_tokenizer.h"

namespace potop {

namespace fs = std::filesystem;

namespace {

// The tensors of model.safetensors, or of the shards model.safetensors.index.json lists, mapped.
class HfTensorFiles final : public ForeignTensors {
 public:
  explicit HfTensorFiles(const fs::path& dir) {
    const fs::path single = dir / "model.safetensors", index = dir / "model.safetensors.index.json";
    if (fs::exists(single)) {
      add_file(single);
    } else if (fs::exists(index)) {
      const nlohmann::json j = read_json_file(index);
      if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object() || j["weight_map"].empty())
        throw Error(index.string() + ": no \"weight_map\" object naming each tensor's file");
      std::map<std::string, std::string> wanted;  // tensor -> shard
      for (const auto& [name, file] : j["weight_map"].items()) {
        if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos)
          throw Error(index.string() + ": weight_map's " + name + " is not a file name beside it");
        wanted[name] = file.get<std::string>();
      }
      std::set<std::string> shards;
      for (const auto& [name, file] : wanted)
        if (shards.insert(file).second) add_file(dir / file);
      for (const auto& [name, file] : wanted) {
        const auto it = where_.find(name);
        if (it == where_.end() || files_[it->second].path() != (dir / file).string())
          throw Error((dir / file).string() + ": has no tensor " + name + ", which " + index.string() + " puts there");
      }
    } else {
      for (const char* pickle : {"pytorch_model.bin", "pytorch_model.bin.index.json", "model.ckpt.index", "tf_model.h5"})
        if (fs::exists(dir / pickle))
          throw Error(dir.string() + ": holds " + pickle + " but no model.safetensors; potop reads safetensors only "
                      "(convert with transformers: model.save_pretrained(dir, safe_serialization=True))");
      throw Error(dir.string() + ": no model.safetensors or model.safetensors.index.json");
    }
  }

  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const SafetensorsFile& f : files_)
      for (const std::string& n : f.names()) out.push_back(n);
    return out;
  }
  bool has(const std::string& name) const override { return where_.count(name) != 0; }
  Shape shape(const std::string& name) const override { return info(name).shape; }
  std::string file_of(const std::string& name) const override {
    const auto it = where_.find(name);
    return it == where_.end() ? (files_.size() == 1 ? files_[0].path() : dir_string()) : files_[it->second].path();
  }

  void read(const std::string& name, float* dst) const override {
    const SafetensorsFile& f = file(name);
    const SafetensorsInfo& i = f.info(name);
    const std::span<const std::byte> bytes = f.bytes(name);
    const size_t n = i.numel();
    switch (i.dtype) {
      case Dtype::F32:
        std::memcpy(dst, bytes.data(), n * sizeof(float));
        break;
      case Dtype::F16:
        for (size_t k = 0; k < n; ++k) {
          uint16_t h;
          std::memcpy(&h, bytes.data() + 2 * k, 2);
          dst[k] = f16_to_f32(h);
        }
        break;
      case Dtype::BF16:  // the upper half of a float32
        for (size_t k = 0; k < n; ++k) {
          uint16_t h;
          std::memcpy(&h, bytes.data() + 2 * k, 2);
          const uint32_t bits = uint32_t{h} << 16;
          std::memcpy(dst + k, &bits, 4);
        }
        break;
      default:
        throw Error(f.path() + ": tensor " + name + " is " + dtype_name(i.dtype) +
                    "; potop imports F32, F16 and BF16 tensors");
    }
    f.release(name);
  }

  // The stored types, "BF16, F32".
  std::string dtypes() const {
    std::set<std::string> seen;
    for (const SafetensorsFile& f : files_)
      for (const std::string& n : f.names()) seen.insert(dtype_name(f.info(n).dtype));
    std::string out;
    for (const std::string& d : seen) out += (out.empty() ? "" : ", ") + d;
    return out;
  }
  size_t count() const { return where_.size(); }

 private:
  void add_file(const fs::path& path) {
    if (!fs::exists(path)) throw Error(path.string() + ": missing");
    files_.push_back(SafetensorsFile::map(path));
    for (const std::string& n : files_.back().names())
      if (!where_.emplace(n, files_.size() - 1).second)
        throw Error(path.string() + ": tensor " + n + " is in " + files_[where_[n]].path() + " as well");
  }
  const SafetensorsFile& file(const std::string& name) const {
    const auto it = where_.find(name);
    if (it == where_.end()) throw Error(dir_string() + ": no tensor " + name);
    return files_[it->second];
  }
  const SafetensorsInfo& info(const std::string& name) const { return file(name).info(name); }
  std::string dir_string() const {
    return files_.empty() ? std::string("the model") : fs::path(files_[0].path()).parent_path().string();
  }

  std::vector<SafetensorsFile> files_;
  std::map<std::string, size_t> where_;  // tensor -> files_ index
};

// The kind whose importer reads `architecture`.
const ModelKind& kind_for(const std::string& architecture, const std::string& config_file) {
  std::string known;
  for (const ModelKind* kind : model_kinds())
    for (const std::string& a : kind->hf_architectures) {
      if (a == architecture) return *kind;
      known += (known.empty() ? "" : ", ") + a;
    }
  throw Error(config_file + ": architectures " + architecture + ": potop imports " + known);
}

}  // namespace

namespace {

// Where the model's texts end: generation_config.json's eos_token_id (a number or a list, as
// transformers' generate() reads it), else config.json's.
std::vector<int> generation_eos_ids(const fs::path& dir, const nlohmann::json& config) {
  nlohmann::json eos = config.value("eos_token_id", nlohmann::json());
  if (fs::exists(dir / "generation_config.json")) {
    const nlohmann::json g = read_json_file(dir / "generation_config.json");
    if (g.is_object() && g.contains("eos_token_id")) eos = g["eos_token_id"];
  }
  std::vector<int> ids;
  for (const nlohmann::json& id : eos.is_array() ? eos : nlohmann::json::array({eos}))
    if (id.is_number_integer()) ids.push_back(id.get<int>());
  return ids;
}

}  // namespace

std::string read_hf_chat_template(const fs::path& dir) {
  if (fs::exists(dir / "chat_template.jinja")) return read_file(dir / "chat_template.jinja");
  const fs::path config_file = dir / "tokenizer_config.json";
  if (!fs::exists(config_file)) return "";
  return hf_chat_template(read_json_file(config_file), config_file.string());
}

std::string hf_chat_template(const nlohmann::json& config, const std::string& source) {
  if (!config.is_object() || !config.contains("chat_template") || config["chat_template"].is_null()) return "";
  const nlohmann::json& t = config["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array())
    for (const nlohmann::json& named : t)
      if (named.is_object() && named.value("name", "") == "default" && named.contains("template") && named["template"].is_string())
        return named["template"].get<std::string>();
  throw Error(source + ": chat_template: expected a string, or a list of {\"name\", \"template\"} with a \"default\"");
}

bool is_hf_config(const nlohmann::json& j) {
  return j.is_object() && !j.contains("kind") && (j.contains("architectures") || j.contains("model_type"));
}

std::unique_ptr<Tokenizer> read_hf_tokenizer(const fs::path& dir, std::string& from) {
  // A SentencePiece model is its own truth (Llama 2's tokenizer.json is a copy in other words);
  // tokenizer.json comes before vocab.json and merges.txt, which lack its pre-tokenizer (SmolLM's
  // digits) and its added tokens.
  if (fs::exists(dir / "tokenizer.model")) {
    from = "tokenizer.model";
    return SentencePieceTokenizer::load(dir / "tokenizer.model");
  }
  if (fs::exists(dir / "tokenizer.json")) {
    from = "tokenizer.json";
    return load_hf_tokenizer_json(dir / "tokenizer.json");
  }
  if (fs::exists(dir / "vocab.json") && fs::exists(dir / "merges.txt")) {
    from = "vocab.json and merges.txt";
    return ByteBpeTokenizer::load(dir / "vocab.json", dir / "merges.txt");
  }
  if (fs::exists(dir / "vocab.txt")) {
    from = "vocab.txt";
    return WordPieceTokenizer::load_vocab_txt(dir / "vocab.txt");
  }
  throw Error(dir.string() + ": no tokenizer files (tokenizer.model, tokenizer.json, vocab.json and merges.txt, or vocab.txt)");
}

ImportSummary import_hf_dir(const fs::path& src, const fs::path& out) {
  if (!fs::is_directory(src)) throw Error(src.string() + ": not a directory (expected a Hugging Face model directory)");
  check_import_out(out);
  const fs::path config_file = src / "config.json";
  if (!fs::exists(config_file)) throw Error(config_file.string() + ": missing (is this a Hugging Face model directory?)");
  const nlohmann::json config = read_json_file(config_file);
  if (!config.is_object()) throw Error(config_file.string() + ": not a JSON object");
  if (config.contains("kind") && config.contains("model"))
    throw Error(src.string() + ": is already a potop model directory; potop's commands load it as it is");
  const auto archs = config.find("architectures");
  if (archs == config.end() || !archs->is_array() || archs->size() != 1 || !(*archs)[0].is_string())
    throw Error(config_file.string() + ": architectures: expected one architecture, such as [\"GPT2LMHeadModel\"]");

  ImportSummary s;
  s.architecture = (*archs)[0].get<std::string>();
  s.kind = &kind_for(s.architecture, config_file.string());
  std::string from;
  const std::unique_ptr<Tokenizer> tokenizer = read_hf_tokenizer(src, from);
  s.tokenizer = tokenizer->kind() + ", " + std::to_string(tokenizer->size()) + " tokens, from " + from;
  const HfTensorFiles tensors(src);
  s.dtypes = tensors.dtypes();
  s.tensors = tensors.count();

  ImportedModel m = s.kind->import_hf({config, config_file.string(), tensors, *tokenizer});
  write_imported_model(out, m, *tokenizer,
                       {{"from", fs::absolute(src).lexically_normal().string()}, {"architecture", s.architecture},
                        {"dtypes", s.dtypes}},
                       s, generation_eos_ids(src, config), read_hf_chat_template(src));
  return s;
}

}  // namespace potop
