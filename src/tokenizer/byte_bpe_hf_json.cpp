// ByteBpeTokenizer::from_hf_json: a Hugging Face tokenizer.json of a byte-level BPE (GPT-2's,
// Llama 3's, SmolLM's) read into potop's byte_bpe, its pre-tokenizer as split expressions.
// What potop would run differently from Hugging Face's tokenizers is refused, naming the field.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tokenizer/byte_bpe_tokenizer.h"

namespace potop {
namespace {

using json = nlohmann::json;

std::string type_of(const json& j) { return j.is_object() ? j.value("type", std::string("?")) : std::string("null"); }

// Hugging Face's expressions are Oniguruma's, whose \s is Unicode's White_Space; ICU's \s leaves
// out U+0085 and a few others, so \s and \S are spelled as the property (inside or outside a class).
std::string icu_expression(const std::string& onig) {
  std::string out;
  for (size_t i = 0; i < onig.size(); ++i) {
    if (onig[i] == '\\' && i + 1 < onig.size()) {
      const char c = onig[i + 1];
      out += c == 's' ? "\\p{White_Space}" : c == 'S' ? "\\P{White_Space}" : std::string{'\\', c};
      ++i;
    } else {
      out += onig[i];
    }
  }
  return out;
}

// icu_expression's inverse.
std::string onig_expression(std::string icu) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"\\p{White_Space}", "\\s"}, {"\\P{White_Space}", "\\S"}})
    for (size_t at = icu.find(from); at != std::string::npos; at = icu.find(from, at + to.size()))
      icu.replace(at, from.size(), to);
  return icu;
}

std::string regex_quoted(const std::string& literal) {
  std::string out;
  for (const char c : literal) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// One pre-tokenizer of the sequence: its expression added to `split`; ByteLevel ends the list.
void read_pre_tokenizer(const json& p, const std::string& where, std::vector<std::string>& split, bool& byte_level) {
  const std::string type = type_of(p);
  if (byte_level) throw Error(where + ": " + type + " after ByteLevel: potop reads ByteLevel as the last pre-tokenizer");
  if (type == "ByteLevel") {
    if (p.value("add_prefix_space", false))
      throw Error(where + ": ByteLevel with add_prefix_space: potop reads byte-level BPEs without it (GPT-2's, Llama 3's)");
    if (p.value("use_regex", true)) split.push_back(ByteBpeOptions::gpt2_split_expression());
    byte_level = true;
  } else if (type == "Split") {
    const std::string behavior = p.value("behavior", std::string("?"));
    if (behavior != "Isolated") throw Error(where + ": Split with behavior " + behavior + ": potop reads Isolated");
    if (p.value("invert", false)) throw Error(where + ": Split with invert: potop reads it without");
    const json& pattern = p.contains("pattern") ? p["pattern"] : json();
    if (pattern.contains("Regex") && pattern["Regex"].is_string())
      split.push_back(icu_expression(pattern["Regex"].get<std::string>()));
    else if (pattern.contains("String") && pattern["String"].is_string())
      split.push_back(regex_quoted(pattern["String"].get<std::string>()));
    else
      throw Error(where + ": Split: pattern is neither {\"Regex\": ...} nor {\"String\": ...}");
  } else if (type == "Digits") {
    split.push_back(p.value("individual_digits", false) ? "\\p{N}" : "\\p{N}+");
  } else {
    throw Error(where + ": " + type +
                ": potop's byte-level BPE reads ByteLevel, Split and Digits pre-tokenizers (GPT-2's, Llama 3's, SmolLM's)");
  }
}

// A special's text in tokenizer_config.json: "<s>" or {"content": "<s>", ...}.
std::string special_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return "";
}

// llama.cpp's names with their models' tokenizer.json expressions (llama.cpp's code holds them
// rewritten without (?i:), the same on all but Unicode's other case foldings such as ſ for s).
struct NamedSplit {
  const char* name;
  std::vector<std::string> split;
  bool ignore_merges;
};

const std::vector<NamedSplit>& named_splits() {
  static const std::vector<NamedSplit> all = [] {
    const std::string gpt2 = ByteBpeOptions::gpt2_split_expression();
    const std::string tail = "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    const std::string head = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|";
    return std::vector<NamedSplit>{{"gpt-2", {gpt2}, false},
                                   {"llama-bpe", {icu_expression(head + "\\p{N}{1,3}" + tail)}, true},
                                   {"qwen2", {icu_expression(head + "\\p{N}" + tail)}, false},
                                   {"smollm", {"\\p{N}", gpt2}, false}};
  }();
  return all;
}

}  // namespace

std::string llama_cpp_pre_tokenizer(const ByteBpeOptions& o) {
  for (const NamedSplit& n : named_splits())
    if (n.split == o.split && n.ignore_merges == o.ignore_merges) return n.name;
  return "";
}

bool set_llama_cpp_pre_tokenizer(std::string_view name, ByteBpeOptions& o) {
  for (const NamedSplit& n : named_splits())
    if (name == n.name) {
      o.split = n.split;
      o.ignore_merges = n.ignore_merges;
      return true;
    }
  return false;
}

std::unique_ptr<ByteBpeTokenizer> ByteBpeTokenizer::from_hf_json(const json& j, const json& config,
                                                                 const std::string& source) {
  if (!j.is_object()) throw Error(source + ": expected a JSON object");
  const json& model = j.contains("model") ? j["model"] : json();
  if (type_of(model) != "BPE") throw Error(source + ": model.type is " + type_of(model) + ", expected BPE");
  if (model.value("byte_fallback", false))
    throw Error(source + ": model.byte_fallback: a SentencePiece-style BPE; import its tokenizer.model instead");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(key) && !model[key].is_null() && model[key] != "")
      throw Error(source + ": model." + key + ": potop's byte-level BPE has no " + key);
  if (model.contains("dropout") && !model["dropout"].is_null() && model["dropout"] != 0)
    throw Error(source + ": model.dropout: BPE dropout changes the ids from run to run; potop reads it without");
  if (j.contains("normalizer") && !j["normalizer"].is_null())
    throw Error(source + ": normalizer " + type_of(j["normalizer"]) +
                ": potop's byte-level BPE reads tokenizer.json files without a normalizer (GPT-2's, Llama 3's, SmolLM's)");
  if (type_of(j.value("decoder", json())) != "ByteLevel")
    throw Error(source + ": decoder " + type_of(j.value("decoder", json())) + ": expected ByteLevel");

  ByteBpeOptions options;
  options.split.clear();
  bool byte_level = false;
  const json& pre = j.contains("pre_tokenizer") ? j["pre_tokenizer"] : json();
  if (type_of(pre) == "Sequence") {
    const json& list = pre.contains("pretokenizers") ? pre["pretokenizers"] : json();
    if (!list.is_array()) throw Error(source + ": pre_tokenizer: a Sequence without pretokenizers");
    for (size_t i = 0; i < list.size(); ++i)
      read_pre_tokenizer(list[i], source + ": pre_tokenizer " + std::to_string(i + 1), options.split, byte_level);
  } else {
    read_pre_tokenizer(pre, source + ": pre_tokenizer", options.split, byte_level);
  }
  if (!byte_level) throw Error(source + ": pre_tokenizer: no ByteLevel, so not a byte-level BPE");
  if (options.split.empty()) options.split.push_back("[\\p{White_Space}\\P{White_Space}]+");  // no expression: the text whole
  if (model.contains("ignore_merges")) {
    if (!model["ignore_merges"].is_boolean()) throw Error(source + ": model.ignore_merges: expected true or false");
    options.ignore_merges = model["ignore_merges"].get<bool>();
  }

  // The vocabulary, then the added tokens in the ids they name (beyond it, or equal to its own).
  const json& vocab = model.contains("vocab") ? model["vocab"] : json();
  if (!vocab.is_object() || vocab.empty()) throw Error(source + ": model.vocab: expected an object of tokens and ids");
  std::vector<std::string> tokens;
  auto place = [&](const std::string& token, const json& id, const std::string& where) {
    if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() > (1LL << 30))
      throw Error(where + ": " + json(token).dump() + " has id " + id.dump());
    const auto i = static_cast<size_t>(id.get<long long>());
    if (i >= tokens.size()) tokens.resize(i + 1);
    if (!tokens[i].empty() && tokens[i] != token)
      throw Error(where + ": id " + std::to_string(i) + " is given to " + json(tokens[i]).dump() + " and " +
                  json(token).dump());
    tokens[i] = token;
  };
  for (const auto& [token, id] : vocab.items()) place(token, id, source + ": model.vocab");
  std::vector<long long> special_ids;  // the added tokens marked special
  if (j.contains("added_tokens")) {
    if (!j["added_tokens"].is_array()) throw Error(source + ": added_tokens: expected a list");
    for (const json& a : j["added_tokens"]) {
      if (!a.is_object() || !a.contains("content") || !a["content"].is_string() || !a.contains("id"))
        throw Error(source + ": added_tokens: expected objects with content and id");
      place(a["content"].get<std::string>(), a["id"], source + ": added_tokens");
      if (a.value("special", false)) special_ids.push_back(a["id"].get<long long>());
    }
  }
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i].empty()) throw Error(source + ": no token has id " + std::to_string(i) + " (ids must number the tokens from 0)");

  std::vector<std::string> merges;
  const json& list = model.contains("merges") ? model["merges"] : json::array();
  if (!list.is_array()) throw Error(source + ": model.merges: expected a list");
  for (const json& m : list) {
    if (m.is_string()) {
      merges.push_back(m.get<std::string>());
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      const std::string left = m[0].get<std::string>(), right = m[1].get<std::string>();
      if (left.find(' ') != std::string::npos || right.find(' ') != std::string::npos)
        throw Error(source + ": model.merges: " + m.dump() + " holds a space, which GPT-2's byte alphabet spells as Ġ");
      merges.push_back(left + " " + right);
    } else {
      throw Error(source + ": model.merges: expected \"left right\" or [left, right], not " + m.dump());
    }
  }

  // The specials: tokenizer_config.json's where it names them, else <|endoftext|> as GPT-2's.
  if (config.is_object()) {
    if (config.contains("bos_token")) options.bos = special_text(config["bos_token"]);
    if (config.contains("eos_token")) options.eos = special_text(config["eos_token"]);
  }
  // The other special tokens, by id (as a GGUF file's control tokens come): bos and eos are named already.
  std::sort(special_ids.begin(), special_ids.end());
  for (const long long id : special_ids) {
    const std::string& text = tokens[static_cast<size_t>(id)];
    if (text != options.bos && text != options.eos &&
        std::find(options.special.begin(), options.special.end(), text) == options.special.end())
      options.special.push_back(text);
  }
  return std::make_unique<ByteBpeTokenizer>(std::move(tokens), merges, source, std::move(options));
}

json ByteBpeTokenizer::hf_pre_tokenizer() const {
  const std::vector<std::string>& split = options_.split;
  const std::string gpt2 = ByteBpeOptions::gpt2_split_expression();
  const bool gpt2_last = split.back() == gpt2;
  auto byte_level = [](bool use_regex) {
    return json{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", use_regex}};
  };
  if (split.size() == 1 && gpt2_last) return byte_level(true);
  json list = json::array();
  for (size_t i = 0; i + (gpt2_last ? 1 : 0) < split.size(); ++i) {
    if (split[i] == "\\p{N}" || split[i] == "\\p{N}+")
      list.push_back({{"type", "Digits"}, {"individual_digits", split[i] == "\\p{N}"}});
    else
      list.push_back({{"type", "Split"}, {"pattern", {{"Regex", onig_expression(split[i])}}}, {"behavior", "Isolated"},
                      {"invert", false}});
  }
  list.push_back(byte_level(gpt2_last));
  return {{"type", "Sequence"}, {"pretokenizers", list}};
}

}  // namespace potop
