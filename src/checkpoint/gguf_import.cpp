#include "checkpoint/gguf_import.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "core/error.h"
#include "tokenizer/byte_bpe_tokenizer.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/utf8.h"

namespace potop {

namespace fs = std::filesystem;

namespace {

// A GGUF file's tensors as foreign tensors: shapes in nn.Linear's order (rows, then the values of
// a row: ne reversed), values as float32, q8_0 and q4_0 matrices also as their rows.
class GgufForeignTensors final : public ForeignTensors {
 public:
  explicit GgufForeignTensors(const GgufFile& file) : file_(file) {}

  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const GgufTensorInfo& t : file_.tensors()) out.push_back(t.name);
    return out;
  }
  bool has(const std::string& name) const override { return file_.find(name) != nullptr; }
  Shape shape(const std::string& name) const override {
    const GgufTensorInfo& t = info(name);
    return Shape(t.ne.rbegin(), t.ne.rend());
  }
  void read(const std::string& name, float* dst) const override {
    const GgufTensorInfo& t = info(name);
    file_.read_floats(t, dst);
    file_.release(t);
  }
  std::string file_of(const std::string&) const override { return file_.path(); }
  std::optional<ForeignQuantized> quantized(const std::string& name) const override {
    const GgufTensorInfo* t = file_.find(name);
    if (!t || t->ne.size() != 2 || (t->type != GgmlType::kQ8_0 && t->type != GgmlType::kQ4_0)) return std::nullopt;
    return ForeignQuantized{t->type == GgmlType::kQ8_0 ? QuantType::kQ8_0 : QuantType::kQ4_0, t->ne[1], t->ne[0],
                            file_.data(*t)};
  }

 private:
  const GgufTensorInfo& info(const std::string& name) const {
    const GgufTensorInfo* t = file_.find(name);
    if (!t) throw Error(file_.path() + ": no tensor " + name);
    return *t;
  }
  const GgufFile& file_;
};

// The kind whose importer reads general.architecture `architecture`.
const ModelKind& kind_for_gguf(const std::string& architecture, const std::string& path) {
  std::string known;
  for (const ModelKind* kind : model_kinds()) {
    if (kind->gguf_architecture.empty()) continue;
    if (kind->gguf_architecture == architecture) return *kind;
    known += (known.empty() ? "" : ", ") + kind->gguf_architecture;
  }
  throw Error(path + ": general.architecture " + architecture + ": potop imports " + known);
}

// A metadata array of strings; Error naming the file and the key otherwise.
std::vector<std::string> strings(const GgufFile& f, const std::string& key) {
  const auto it = f.metadata().find(key);
  if (it == f.metadata().end()) throw Error(f.path() + ": metadata " + key + " is missing");
  std::vector<std::string> out;
  if (it->is_array())
    for (const nlohmann::json& v : *it)
      if (v.is_string()) out.push_back(v.get<std::string>());
  if (!it->is_array() || out.size() != it->size()) throw Error(f.path() + ": metadata " + key + " is not an array of strings");
  return out;
}

// A metadata array of numbers (scores, token types), or empty when absent.
std::vector<double> numbers(const GgufFile& f, const std::string& key, size_t n) {
  const auto it = f.metadata().find(key);
  if (it == f.metadata().end()) return {};
  if (!it->is_array() || it->size() != n)
    throw Error(f.path() + ": metadata " + key + " is not an array of " + std::to_string(n) + " numbers, one per token");
  std::vector<double> out;
  for (const nlohmann::json& v : *it) {
    if (!v.is_number()) throw Error(f.path() + ": metadata " + key + " holds a value that is not a number");
    out.push_back(v.get<double>());
  }
  return out;
}

// A vocabulary potop wrote for a char model (export/gguf_vocab.h): every token one character in
// the byte alphabet, and no two the same. Those characters, or empty for any other vocabulary.
std::vector<char32_t> one_character_tokens(const std::vector<std::string>& tokens) {
  std::vector<char32_t> chars;
  std::set<char32_t> seen;
  for (const std::string& token : tokens) {
    std::string bytes;
    if (!byte_level_bytes(token, bytes) || !utf8_valid(bytes)) return {};
    const std::u32string text = utf8_decode(bytes, "a token");
    if (text.size() != 1 || !seen.insert(text[0]).second) return {};
    chars.push_back(text[0]);
  }
  return chars;
}

// protobuf's wire format, as much of it as a SentencePiece ModelProto needs.
void put_varint(std::string& out, uint64_t v) {
  for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7F) | 0x80);
  out += static_cast<char>(v);
}
void put_int(std::string& out, int field, int64_t v) {
  put_varint(out, static_cast<uint64_t>(field) << 3);
  put_varint(out, static_cast<uint64_t>(v));  // a negative int32 takes ten bytes, as protobuf writes it
}
void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | 2);
  put_varint(out, bytes.size());
  out += bytes;
}
void put_float(std::string& out, int field, float v) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | 5);
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

// llama.cpp's "llama" vocabulary as the SentencePiece BPE model it came from: the pieces with
// their scores and types (llama.cpp's token types are SentencePiece's), the special ids of the
// file, no normalization but the space prefix and whitespace handling its keys say.
std::string sentencepiece_model(const GgufFile& f) {
  const std::vector<std::string> tokens = strings(f, "tokenizer.ggml.tokens");
  const std::vector<double> scores = numbers(f, "tokenizer.ggml.scores", tokens.size());
  const std::vector<double> types = numbers(f, "tokenizer.ggml.token_type", tokens.size());
  const auto id = [&](const std::string& key, int fallback) {
    const auto it = f.metadata().find(key);
    if (it == f.metadata().end()) return fallback;
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() >= int64_t(tokens.size()))
      throw Error(f.path() + ": metadata " + key + " is not a token id");
    return it->get<int>();
  };
  const auto flag = [&](const std::string& key, bool fallback) {
    const auto it = f.metadata().find(key);
    return it != f.metadata().end() && it->is_boolean() ? it->get<bool>() : fallback;
  };
  std::string model;
  bool byte_fallback = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int type = types.empty() ? 1 : static_cast<int>(types[i]);
    if (type < 1 || type > 6) throw Error(f.path() + ": metadata tokenizer.ggml.token_type: token " + std::to_string(i) +
                                          " has type " + std::to_string(type) + ", which SentencePiece does not define");
    byte_fallback = byte_fallback || type == 6;
    std::string piece;
    put_bytes(piece, 1, tokens[i]);
    put_float(piece, 2, scores.empty() ? 0.0f : static_cast<float>(scores[i]));
    if (type != 1) put_int(piece, 3, type);
    put_bytes(model, 1, piece);
  }
  std::string trainer;
  put_int(trainer, 3, 2);  // model_type BPE
  put_int(trainer, 4, static_cast<int64_t>(tokens.size()));
  put_int(trainer, 35, byte_fallback ? 1 : 0);
  // SentencePiece finds its specials by piece (unk_piece 45, bos_piece 46, ...), their ids by
  // unk_id 40, bos_id 41, ...: both from the file's ids.
  const std::pair<const char*, int> specials[] = {{"unknown", 0}, {"bos", 1}, {"eos", 2}, {"padding", -1}};
  for (int k = 0; k < 4; ++k) {
    int at = id(std::string("tokenizer.ggml.") + specials[k].first + "_token_id", specials[k].second);
    if (at >= static_cast<int>(tokens.size())) at = -1;  // a default past a short vocabulary: none
    put_int(trainer, 40 + k, at);
    if (at >= 0) put_bytes(trainer, 45 + k, tokens[static_cast<size_t>(at)]);
  }
  put_bytes(model, 2, trainer);
  std::string normalizer;
  put_bytes(normalizer, 1, "identity");
  put_int(normalizer, 3, flag("tokenizer.ggml.add_space_prefix", true) ? 1 : 0);
  put_int(normalizer, 4, flag("tokenizer.ggml.remove_extra_whitespaces", false) ? 1 : 0);
  put_int(normalizer, 5, 1);  // escape_whitespaces: a space is U+2581
  put_bytes(model, 3, normalizer);
  return model;
}

}  // namespace

std::unique_ptr<Tokenizer> read_gguf_tokenizer(const GgufFile& f, std::string& from) {
  const std::string model = f.string("tokenizer.ggml.model");
  if (model == "gpt2") {
    const std::vector<std::string> tokens = strings(f, "tokenizer.ggml.tokens");
    const std::vector<std::string> merges =
        f.metadata().contains("tokenizer.ggml.merges") ? strings(f, "tokenizer.ggml.merges") : std::vector<std::string>{};
    if (std::vector<char32_t> chars = one_character_tokens(tokens); !chars.empty()) {
      from = "tokenizer.ggml (gpt2, one character per token)";
      return std::make_unique<CharTokenizer>(std::move(chars), f.path() + ": tokenizer.ggml.tokens");
    }
    // llama.cpp splits by the expressions its pre-tokenizer's name stands for (absent: its
    // "default", none of potop's).
    ByteBpeOptions options;
    const std::string pre = f.metadata().contains("tokenizer.ggml.pre") ? f.string("tokenizer.ggml.pre") : "(absent)";
    if (!set_llama_cpp_pre_tokenizer(pre, options))
      throw Error(f.path() + ": tokenizer.ggml.pre " + pre +
                  ": potop reads byte-level vocabularies with llama.cpp's gpt-2, llama-bpe, qwen2 and smollm "
                  "pre-tokenizers; for another model import the Hugging Face directory, whose tokenizer.json holds its "
                  "split expressions");
    // Its begin and end of text where the file marks them as control tokens. An id at an ordinary
    // token (potop's export writes 0 for none) means none: the default <|endoftext|> is dropped
    // where the vocabulary has it, and kept, naming nothing, where it does not.
    std::vector<double> types = numbers(f, "tokenizer.ggml.token_type", tokens.size());
    if (types.empty()) types.assign(tokens.size(), 1);
    auto special = [&](const char* key, std::string& text) {
      const auto it = f.metadata().find(key);
      if (it == f.metadata().end() || !it->is_number_integer()) return;
      const int64_t at = it->get<int64_t>();
      if (at >= 0 && at < static_cast<int64_t>(tokens.size()) && types[static_cast<size_t>(at)] == 3)
        text = tokens[static_cast<size_t>(at)];
      else if (std::find(tokens.begin(), tokens.end(), text) != tokens.end())
        text.clear();
    };
    special("tokenizer.ggml.bos_token_id", options.bos);
    special("tokenizer.ggml.eos_token_id", options.eos);
    // Its other control tokens (Llama 3's <|start_header_id|>), which a chat template writes out.
    for (size_t id = 0; id < tokens.size(); ++id)
      if (types[id] == 3 && tokens[id] != options.bos && tokens[id] != options.eos) options.special.push_back(tokens[id]);
    from = "tokenizer.ggml (gpt2 byte-level BPE, pre-tokenizer " + pre + ")";
    return std::make_unique<ByteBpeTokenizer>(tokens, merges, f.path() + ": tokenizer.ggml", std::move(options));
  }
  if (model == "llama") {
    from = "tokenizer.ggml (llama SentencePiece BPE)";
    return SentencePieceTokenizer::from_model(sentencepiece_model(f), f.path() + ": tokenizer.ggml");
  }
  throw Error(f.path() + ": tokenizer.ggml.model " + model +
              ": potop reads the gpt2 (byte-level BPE) and llama (SentencePiece BPE) tokenizers");
}

namespace {

// llama.cpp's tokenizer.chat_template (Jinja, as Hugging Face's), empty when the file has none.
std::string gguf_chat_template(const GgufFile& f) {
  const auto it = f.metadata().find("tokenizer.chat_template");
  return it != f.metadata().end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

ImportSummary import_gguf_file(const fs::path& src, const fs::path& out) {
  check_import_out(out);
  const GgufFile file(src);
  ImportSummary s;
  s.architecture = file.string("general.architecture");
  s.kind = &kind_for_gguf(s.architecture, file.path());
  std::set<std::string> types;
  for (const GgufTensorInfo& t : file.tensors()) {
    if (!ggml_type_known(t.type))
      throw Error(file.path() + ": tensor " + t.name + " is " + to_string(t.type) +
                  "; potop imports f32, f16, bf16, q8_0 and q4_0 tensors (requantize with llama-quantize)");
    types.insert(to_string(t.type));
  }
  for (const std::string& t : types) s.dtypes += (s.dtypes.empty() ? "" : ", ") + t;
  s.tensors = file.tensors().size();
  std::string from;
  const std::unique_ptr<Tokenizer> tokenizer = read_gguf_tokenizer(file, from);
  s.tokenizer = tokenizer->kind() + ", " + std::to_string(tokenizer->size()) + " tokens, from " + from;
  const GgufForeignTensors tensors(file);
  ImportedModel m = s.kind->import_gguf({file.metadata(), file.path(), tensors, *tokenizer});
  write_imported_model(out, m, *tokenizer,
                       {{"from", fs::absolute(src).lexically_normal().string()},
                        {"architecture", "GGUF " + s.architecture},
                        {"dtypes", s.dtypes}},
                       s, {}, gguf_chat_template(file));
  return s;
}

}  // namespace potop
