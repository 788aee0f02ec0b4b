// The files every Hugging Face export writes alike (see hf_files.h and docs/export-hf.md).
#include "export/hf_files.h"

#include <algorithm>
#include <system_error>

#include "core/error.h"
#include "core/file_io.h"
#include "core/safetensors.h"
#include "tokenizer/byte_bpe_tokenizer.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/byte_tokenizer.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/utf8.h"

namespace potop {

namespace fs = std::filesystem;

namespace {

using ojson = nlohmann::ordered_json;

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

ojson tokenizer_config(const std::string& tokenizer_class, const Tokenizer& tokenizer, int model_max_length,
                       const std::string& chat_template) {
  ojson j;
  j["tokenizer_class"] = tokenizer_class;
  j["model_max_length"] = model_max_length;
  j["clean_up_tokenization_spaces"] = false;
  if (hf_has_specials(tokenizer)) {
    j["pad_token"] = kSpecialPieces[kPadId];
    j["bos_token"] = kSpecialPieces[kBosId];
    j["eos_token"] = kSpecialPieces[kEosId];
    j["unk_token"] = kSpecialPieces[kUnkId];
  } else if (is_sentencepiece(tokenizer)) {
    // An imported SentencePiece model's own (Llama 2's <s>, </s>, <unk>; no <pad>).
    const SpecialTokens s = tokenizer.specials();
    for (const auto& [name, id] : {std::pair{"pad_token", s.pad}, {"bos_token", s.bos}, {"eos_token", s.eos}, {"unk_token", s.unk}})
      if (id >= 0) j[name] = tokenizer.piece(id);
  }
  if (!chat_template.empty()) j["chat_template"] = chat_template;
  return j;
}

}  // namespace

void check_hf_tokenizer(const Tokenizer& tokenizer) {
  const std::string kind = tokenizer.kind();
  if (kind != "char" && kind != "byte" && kind != "bpe" && kind != "unigram" && kind != "byte_bpe")
    throw Error("tokenizer: potop does not write Hugging Face files for a " + kind +
                " tokenizer (word: potop's own word splitting and lowercasing); models with a char, byte, bpe, unigram "
                "or byte_bpe tokenizer can be exported");
}

void add_special_ids(ojson& j, const Tokenizer& tokenizer) {
  const SpecialTokens s = tokenizer.specials();
  j["bos_token_id"] = s.bos >= 0 ? ojson(s.bos) : ojson(nullptr);
  j["eos_token_id"] = s.eos >= 0 ? ojson(s.eos) : ojson(nullptr);
  if (s.pad >= 0) j["pad_token_id"] = s.pad;
}

bool hf_has_specials(const Tokenizer& tokenizer) { return tokenizer.specials() == kPotopSpecials; }

std::string hf_json_text(const ojson& j) { return j.dump(2) + "\n"; }

void write_hf_directory(const fs::path& out_dir, const std::function<void(const fs::path& tmp)>& write) {
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
  write_directory_atomic(out, write);
}

void write_hf_safetensors(const fs::path& path, const std::vector<HfTensor>& tensors) {
  std::vector<SafetensorsEntry> entries;
  entries.reserve(tensors.size());
  for (const HfTensor& t : tensors) entries.push_back({t.name, Dtype::F32, t.shape, t.values.data()});
  // transformers refuses a safetensors file whose metadata lacks format "pt".
  write_safetensors(path, entries, {{"format", "pt"}});
}

void write_hf_generation_config(const Tokenizer& tokenizer, int max_length, const fs::path& dir) {
  ojson j;
  if (tokenizer.specials().bos >= 0 || tokenizer.specials().eos >= 0) add_special_ids(j, tokenizer);
  j["max_length"] = max_length;
  write_file_atomic(dir / "generation_config.json", hf_json_text(j));
}

void write_hf_tokenizer_files(const Tokenizer& t, int model_max_length, const fs::path& dir, const std::string& chat_template) {
  if (const auto* chars = dynamic_cast<const CharTokenizer*>(&t)) {
    // One token per code point: a BPE without merges over the characters themselves (not GPT-2's
    // bytes, whose pieces the vocabulary lacks), the whole text one word, tokens joined by Fuse.
    ojson vocab = ojson::object();
    for (int id = 0; id < chars->size(); ++id) vocab[utf8_encode(chars->char_of(id))] = id;
    write_file_atomic(dir / "tokenizer.json",
                      hf_json_text(tokenizer_json(ojson::array(), nullptr, {{"type", "Fuse"}}, bpe_model(vocab))));
    write_file_atomic(dir / "tokenizer_config.json",
                      hf_json_text(tokenizer_config("PreTrainedTokenizerFast", t, model_max_length, chat_template)));
  } else if (dynamic_cast<const ByteTokenizer*>(&t)) {
    // The specials, then byte b as id 4 + b: GPT-2's byte-level BPE with no merges.
    ojson vocab = ojson::object(), added = ojson::array();
    for (int id = 0; id < kSpecialCount; ++id) {
      vocab[kSpecialPieces[id]] = id;
      added.push_back(added_token(id, kSpecialPieces[id]));
    }
    for (int b = 0; b < 256; ++b) vocab[byte_level_char(static_cast<unsigned char>(b))] = ByteTokenizer::kFirstByteId + b;
    const ojson byte_level = {
        {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}};
    write_file_atomic(dir / "tokenizer.json",
                      hf_json_text(tokenizer_json(added, byte_level, byte_level, bpe_model(vocab))));
    write_file_atomic(dir / "vocab.json", vocab.dump() + "\n");  // GPT2Tokenizer's files
    write_file_atomic(dir / "merges.txt", "#version: 0.2\n");
    write_file_atomic(dir / "tokenizer_config.json",
                      hf_json_text(tokenizer_config("PreTrainedTokenizerFast", t, model_max_length, chat_template)));
  } else if (const auto* gpt2 = dynamic_cast<const ByteBpeTokenizer*>(&t)) {
    // GPT-2's own files and its tokenizer.json: byte-level BPE with its split expressions (GPT-2's:
    // ByteLevel's use_regex), the merges by rank, its specials added tokens. A split that is not
    // GPT-2's makes GPT2Tokenizer (vocab.json and merges.txt) wrong: tokenizer.json's class then.
    const ByteBpeOptions& options = gpt2->options();
    write_file_atomic(dir / "vocab.json", gpt2->vocab_json() + "\n");
    write_file_atomic(dir / "merges.txt", gpt2->merges_txt());
    ojson added = ojson::array(), merges = ojson::array();
    const SpecialTokens specials = gpt2->specials();
    for (const std::string& m : gpt2->merges()) merges.push_back(m);
    std::vector<int> special_ids = gpt2->special_ids();  // bos, eos and the other added specials, by id
    std::sort(special_ids.begin(), special_ids.end());
    for (const int id : special_ids) added.push_back(added_token(id, gpt2->token(id)));
    const ojson byte_level = {
        {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
    // The vocabulary goes in as vocab.json's text (vocab_json): ordered_json's inserts search
    // its keys linearly, too slow for 50257 of them.
    const std::string placeholder = "potop: vocab.json goes here";
    ojson model = bpe_model(placeholder);
    if (options.ignore_merges) model["ignore_merges"] = true;
    model["merges"] = merges;
    std::string text = hf_json_text(tokenizer_json(added, ojson::parse(gpt2->hf_pre_tokenizer().dump()), byte_level, model));
    const std::string vocab = gpt2->vocab_json();
    const size_t at = text.find(ojson(placeholder).dump());
    POTOP_CHECK(at != std::string::npos, "tokenizer.json lost its vocabulary's place");
    text.replace(at, ojson(placeholder).dump().size(), vocab);
    write_file_atomic(dir / "tokenizer.json", text);
    const bool gpt2_split = options.split == ByteBpeOptions{}.split && !options.ignore_merges;
    ojson j = tokenizer_config(gpt2_split ? "GPT2Tokenizer" : "PreTrainedTokenizerFast", t, model_max_length, chat_template);
    // null where there is none (Qwen2's bos): a reader would otherwise take GPT-2's <|endoftext|>.
    j["bos_token"] = specials.bos >= 0 ? ojson(gpt2->token(specials.bos)) : ojson(nullptr);
    j["eos_token"] = specials.eos >= 0 ? ojson(gpt2->token(specials.eos)) : ojson(nullptr);
    if (specials.eos >= 0) j["unk_token"] = gpt2->token(specials.eos);
    j["add_prefix_space"] = false;
    write_file_atomic(dir / "tokenizer_config.json", hf_json_text(j));
  } else if (const auto* sp = dynamic_cast<const SentencePieceTokenizer*>(&t)) {
    // SentencePiece's own model, for a SentencePiece-based tokenizer class: encoded with
    // sp_model.encode (legacy), no <bos> or <eos> added.
    write_file_atomic(dir / "tokenizer.model", sp->model());
    ojson j = tokenizer_config("LlamaTokenizer", t, model_max_length, chat_template);
    j["add_bos_token"] = false;
    j["add_eos_token"] = false;
    j["legacy"] = true;
    j["add_prefix_space"] = false;
    j["sp_model_kwargs"] = ojson::object();
    write_file_atomic(dir / "tokenizer_config.json", hf_json_text(j));
  } else {
    POTOP_CHECK(false, "check_hf_tokenizer let through a tokenizer of kind " + t.kind());
  }
}

}  // namespace potop
