#include "tokenizer/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "tokenizer/pieces.h"
#include "tokenizer/utf8.h"

namespace potop {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's space
// Longest line (bytes) SentencePiece trains on; longer lines are left out (spm's default is 4192).
constexpr long kMaxSentenceBytes = 1 << 16;

// --- The few fields of a serialized ModelProto that the processor's API does not expose. ----
// Protocol buffers' wire format: (field number << 3 | wire type) varints, then the value.
bool read_varint(std::string_view& s, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && !s.empty(); shift += 7) {
    const auto b = static_cast<unsigned char>(s.front());
    s.remove_prefix(1);
    v |= uint64_t(b & 0x7F) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// The last value of field `number` in message m: a varint, or the bytes of a length-delimited
// field. nullopt when absent or when m is malformed.
struct WireValue {
  uint64_t varint = 0;
  std::string_view bytes;
};
std::optional<WireValue> find_field(std::string_view m, uint64_t number) {
  std::optional<WireValue> found;
  while (!m.empty()) {
    uint64_t tag, v;
    if (!read_varint(m, tag)) return std::nullopt;
    WireValue value;
    switch (tag & 7) {
      case 0:
        if (!read_varint(m, v)) return std::nullopt;
        value.varint = v;
        break;
      case 1:
      case 5: {
        const size_t n = (tag & 7) == 1 ? 8 : 4;
        if (m.size() < n) return std::nullopt;
        m.remove_prefix(n);
        break;
      }
      case 2:
        if (!read_varint(m, v) || v > m.size()) return std::nullopt;
        value.bytes = m.substr(0, v);
        m.remove_prefix(v);
        break;
      default:
        return std::nullopt;  // groups: not in a ModelProto
    }
    if ((tag >> 3) == number) found = value;
  }
  return found;
}

// ModelProto.trainer_spec (2) .model_type (3): UNIGRAM 1 (the default), BPE 2, WORD 3, CHAR 4.
int model_type(std::string_view model) {
  const auto spec = find_field(model, 2);
  if (!spec) return 1;
  const auto type = find_field(spec->bytes, 3);
  return type ? static_cast<int>(type->varint) : 1;
}

// Whether a line's encoding is its words' encodings one after another (see word_cache_ok_):
// ModelProto.normalizer_spec (3) has name (1) "identity", add_dummy_prefix (3) and
// remove_extra_whitespaces (4) false (both default to true), and no piece has U+2581 after
// another character.
bool encodes_word_by_word(std::string_view model, const sentencepiece::SentencePieceProcessor& sp) {
  const auto normalizer = find_field(model, 3);
  if (!normalizer) return false;
  const auto name = find_field(normalizer->bytes, 1);
  const auto dummy_prefix = find_field(normalizer->bytes, 3);
  const auto remove_spaces = find_field(normalizer->bytes, 4);
  if (!name || name->bytes != "identity" || !dummy_prefix || dummy_prefix->varint != 0 || !remove_spaces ||
      remove_spaces->varint != 0)
    return false;
  for (int id = 0; id < sp.GetPieceSize(); ++id) {
    const std::string& piece = sp.IdToPiece(id);
    size_t lead = 0;  // the leading U+2581s
    while (piece.compare(lead, kSpaceMark.size(), kSpaceMark) == 0) lead += kSpaceMark.size();
    if (piece.find(kSpaceMark, lead) != std::string::npos) return false;
  }
  return true;
}

// A boolean of ModelProto.normalizer_spec (3): add_dummy_prefix (3), remove_extra_whitespaces (4).
bool normalizer_flag(std::string_view model, int field) {
  const auto normalizer = find_field(model, 3);
  const auto flag = normalizer ? find_field(normalizer->bytes, field) : std::nullopt;
  return flag ? flag->varint != 0 : true;  // SentencePiece's default
}

// Cached words: enough for a large text's vocabulary, bounded so that memory stays small.
constexpr size_t kMaxCachedWords = 1 << 18;

// Feeds SentencePiece's trainer the lines of a text, as spm_train reads a file: split at '\n',
// no empty line after a final '\n'.
class LineIterator final : public sentencepiece::SentenceIterator {
 public:
  explicit LineIterator(std::string_view text) : text_(text) { Next(); }
  bool done() const override { return done_; }
  void Next() override {
    if (pos_ >= text_.size()) {
      done_ = true;
      return;
    }
    const size_t end = std::min(text_.find('\n', pos_), text_.size());
    line_.assign(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
  }
  const std::string& value() const override { return line_; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  std::string line_;
  bool done_ = false;
};

std::string to_string(long v) { return std::to_string(v); }

// --- What SentencePiece's trainer makes of a text, to say its failures in potop's terms. -----
// Its LoadSentences (trainer_interface.cc, 0.1.97 and later) leaves out empty lines, lines longer
// than max_sentence_length bytes and lines holding U+2585 (its mark for a rare character); in
// the others it writes a space as U+2581 and a special piece's text ("<unk>", "<0x41>") as a tab.
// The most frequent characters, up to character_coverage of them all, each need a piece of their
// own besides the specials and the byte pieces; the tab never gets one. Counted the same way here.
constexpr std::string_view kRareMark = "\xE2\x96\x85";  // U+2585
constexpr float kCharacterCoverage = 0.9995f;           // SentencePiece's default, which potop keeps
constexpr long kMetaPieces = kSpecialCount + 256;       // the specials and the byte pieces

struct TrainingLines {
  long read = 0;                            // lines given to SentencePiece
  long kept = 0;                            // lines it trains on
  long too_long = 0, first_too_long = 0;    // left out: longer than kMaxSentenceBytes (count, line number)
  long rare_mark = 0, first_rare_mark = 0;  // left out: holding U+2585
  long alphabet = 0;                        // characters that need a piece of their own
};

// The length of a special piece's text at the start of s ("<pad>", "<0x0A>"), 0 if none.
size_t special_piece_at(std::string_view s) {
  for (const char* special : kSpecialPieces)
    if (s.starts_with(special)) return std::string_view(special).size();
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); };
  if (s.size() >= 6 && s.starts_with("<0x") && hex(s[3]) && hex(s[4]) && s[5] == '>') return 6;
  return 0;
}

// One code point of valid UTF-8 at s[i]; advances i.
char32_t next_code_point(std::string_view s, size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const int len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
  char32_t cp = len == 1 ? b : b & (0x7F >> len);
  for (int k = 1; k < len; ++k) cp = cp << 6 | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += static_cast<size_t>(len);
  return cp;
}

TrainingLines survey_lines(std::string_view text) {
  TrainingLines t;
  std::unordered_map<char32_t, long> counts;
  long all = 0;
  for (LineIterator lines(text); !lines.done(); lines.Next()) {
    const std::string_view line = lines.value();
    ++t.read;
    if (line.empty()) continue;
    if (line.size() > static_cast<size_t>(kMaxSentenceBytes)) {
      if (t.too_long++ == 0) t.first_too_long = t.read;
      continue;
    }
    if (line.find(kRareMark) != std::string_view::npos) {
      if (t.rare_mark++ == 0) t.first_rare_mark = t.read;
      continue;
    }
    ++t.kept;
    for (size_t i = 0; i < line.size();) {
      char32_t c;
      if (const size_t n = special_piece_at(line.substr(i)); n > 0) {
        c = U'\t';
        i += n;
      } else {
        c = next_code_point(line, i);
        if (c == U' ') c = U'\u2581';
      }
      if (c == 0) continue;  // SentencePiece skips NUL
      ++counts[c];
      ++all;
    }
  }
  // By decreasing count, ties by code point, as SentencePiece's Sorted().
  std::vector<std::pair<char32_t, long>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
  long covered = 0;
  for (const auto& [c, n] : sorted) {
    const auto coverage = static_cast<float>(static_cast<double>(covered) / static_cast<double>(all));
    if (coverage >= kCharacterCoverage) break;
    covered += n;
    if (c != U'\t') ++t.alphabet;
  }
  return t;
}

// The number after `key` in message, or -1: SentencePiece's "... 261 vs 325." and "<= 288.".
long number_after(std::string_view message, std::string_view key) {
  const size_t at = message.find(key);
  if (at == std::string_view::npos) return -1;
  long v = -1;
  for (size_t i = at + key.size(); i < message.size() && message[i] >= '0' && message[i] <= '9'; ++i)
    v = (v < 0 ? 0 : v * 10) + (message[i] - '0');
  return v;
}

// SentencePiece's message without its source position and the check that failed:
// "./src/trainer_interface.cc(580) [a <= b] Vocabulary size is smaller..." -> "Vocabulary size
// is smaller...", or, when nothing follows, "its check a <= b failed".
std::string without_source_position(std::string message) {
  if (const size_t paren = message.find(".cc("); paren != std::string::npos) {
    const size_t end = message.find(") ", paren);
    if (end != std::string::npos) message.erase(0, end + 2);
  }
  std::string check;
  if (message.starts_with("[")) {
    const size_t close = message.find("] ");
    const size_t end = close == std::string::npos ? message.size() : close;
    check = message.substr(1, end - 1);
    message.erase(0, close == std::string::npos ? message.size() : close + 2);
  }
  while (!message.empty() && (message.back() == ' ' || message.back() == '\n')) message.pop_back();
  if (message.empty()) return "its internal check " + check + " failed";
  return message;
}

// Why SentencePiece would not train (or crash on) this text, said before it runs: no line it
// reads, or no character it would learn. Empty when it can start.
std::string nothing_to_learn(const TrainingLines& t, const std::string& src) {
  if (t.kept == 0) {
    std::string why;
    auto add = [&why](long n, const std::string& what) {
      if (n > 0) why += (why.empty() ? "" : ", ") + std::to_string(n) + " " + what;
    };
    add(t.read - t.too_long - t.rare_mark, "empty");
    add(t.too_long, "longer than " + std::to_string(kMaxSentenceBytes) + " bytes (line " +
                        std::to_string(t.first_too_long) + " the first)");
    add(t.rare_mark, "holding U+2585 '\u2585', which SentencePiece reserves (line " +
                         std::to_string(t.first_rare_mark) + " the first)");
    return src + ": no line to learn a vocabulary from: of its " + std::to_string(t.read) + " line" +
           (t.read == 1 ? "" : "s") + ", " + why + (t.too_long > 0 ? "; break long lines into sentences" : "");
  }
  if (t.alphabet == 0)
    return src + ": no character to learn a vocabulary from: its lines hold only tabs and special tokens' text "
           "(<pad>, <bos>, <eos>, <unk>, <0x00>..<0xFF>), which SentencePiece does not learn";
  return "";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> sentencepiece_flags() {
  return {{"pad_id", "0"},
          {"bos_id", "1"},
          {"eos_id", "2"},
          {"unk_id", "3"},
          {"pad_piece", kSpecialPieces[kPadId]},
          {"bos_piece", kSpecialPieces[kBosId]},
          {"eos_piece", kSpecialPieces[kEosId]},
          {"unk_piece", kSpecialPieces[kUnkId]},
          {"byte_fallback", "true"},
          {"normalization_rule_name", "identity"},
          {"add_dummy_prefix", "false"},
          {"remove_extra_whitespaces", "false"},
          {"split_digits", "true"},
          {"allow_whitespace_only_pieces", "true"},
          {"max_sentence_length", to_string(kMaxSentenceBytes)}};
}

namespace {

// SentencePiece's reason for refusing a model, without the source location its checks put first
// ("sentencepiece_processor.cc(NNN) [model_proto->ParseFromArray(...)] "), which says nothing to a
// user; a failed check with nothing after it is a model that does not parse.
std::string load_failure(const std::string& message) {
  std::string reason = message;
  const size_t check = reason.find(") [");
  if (reason.find(".cc(") != std::string::npos && check != std::string::npos) {
    const size_t close = reason.find("] ", check);
    reason = close == std::string::npos ? "" : reason.substr(close + 2);
  }
  while (!reason.empty() && reason.back() == ' ') reason.pop_back();
  return reason.empty() ? "it does not parse as one" : reason;
}

}  // namespace

bool SentencePieceTokenizer::adds_dummy_prefix() const { return normalizer_flag(model_, 3); }
bool SentencePieceTokenizer::removes_extra_whitespaces() const { return normalizer_flag(model_, 4); }

SentencePieceTokenizer::SentencePieceTokenizer() : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::from_model(std::string model, std::string_view source) {
  const std::string src(source);
  std::unique_ptr<SentencePieceTokenizer> t(new SentencePieceTokenizer);
  if (model.empty()) throw Error(src + ": empty, not a SentencePiece model");
  const auto status = t->sp_->LoadFromSerializedProto(model);
  if (!status.ok() || t->sp_->GetPieceSize() <= 0)
    throw Error(src + ": not a SentencePiece model (" + (status.ok() ? "no pieces" : load_failure(status.error_message())) + ")");
  const int type = model_type(model);
  if (type != 1 && type != 2)
    throw Error(src + ": a SentencePiece " + (type == 3 ? "word" : type == 4 ? "char" : "unknown-type") +
                " model; potop imports bpe and unigram models (its own word and char kinds do the rest)");
  t->kind_ = type == 2 ? "bpe" : "unigram";
  const sentencepiece::SentencePieceProcessor& sp = *t->sp_;
  // Its own special ids: potop's (<pad> 0, <bos> 1, <eos> 2, <unk> 3) for the models potop
  // trains, Llama 2's (<unk> 0, <s> 1, </s> 2, no <pad>) for those it imports.
  if (sp.unk_id() < 0) throw Error(src + ": the model has no <unk> piece, which SentencePiece needs");
  t->specials_ = {sp.pad_id(), sp.bos_id(), sp.eos_id(), sp.unk_id()};
  if (sp.GetPieceSize() > kMaxVocabSize) throw Error(src + ": more pieces than token ids can number");
  t->model_ = std::move(model);
  const int n = sp.GetPieceSize();
  t->text_.resize(static_cast<size_t>(n));
  for (int id = 0; id < n; ++id) {
    const std::string& piece = sp.IdToPiece(id);
    std::string& text = t->text_[static_cast<size_t>(id)];
    if (sp.IsByte(id)) {
      unsigned value = 0;
      if (std::sscanf(piece.c_str(), "<0x%2X>", &value) != 1 || value > 0xFF)
        throw Error(src + ": byte piece " + std::to_string(id) + " is " + piece + ", expected <0x00>..<0xFF>");
      text.assign(1, static_cast<char>(value));
      t->byte_fallback_ = true;
    } else if (sp.IsControl(id)) {
      text.clear();
    } else if (sp.IsUnknown(id)) {
      text = sp.DecodeIds({id});  // the model's unk_surface, " ⁇ " by default
    } else {
      for (size_t at = 0;;) {  // SentencePiece writes a space as U+2581
        const size_t mark = piece.find(kSpaceMark, at);
        text.append(piece, at, mark == std::string::npos ? std::string::npos : mark - at);
        if (mark == std::string::npos) break;
        text += ' ';
        at = mark + kSpaceMark.size();
      }
    }
  }
  const int newline = sp.PieceToId("\n");
  const int newline_byte = sp.PieceToId("<0x0A>");
  if (sp.IdToPiece(newline) == "\n" && !sp.IsUnknown(newline)) t->newline_id_ = newline;
  else if (sp.IsByte(newline_byte)) t->newline_id_ = newline_byte;
  t->word_cache_ok_ = encodes_word_by_word(t->model_, sp);
  return t;
}

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::load(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(path.string() + ": SentencePiece model file not found");
  return from_model(read_file(path), path.string());
}

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::train(std::string_view text, std::string_view what,
                                                                      const SentencePieceTrainOptions& options) {
  const std::string src(what);
  if (options.kind != "bpe" && options.kind != "unigram")
    throw Error("unknown SentencePiece model kind '" + options.kind + "' (bpe or unigram)");
  constexpr long kMin = kSpecialCount + 256 + 1;
  if (options.vocab_size < kMin)
    throw Error("--vocab-size " + std::to_string(options.vocab_size) + ": a " + options.kind +
                " vocabulary holds the 4 special tokens, the 256 byte pieces and a piece per distinct character of "
                "the text, so it needs at least " +
                std::to_string(kMin) + " (8000 is usual)");
  if (options.vocab_size > kMaxVocabSize)
    throw Error("--vocab-size " + std::to_string(options.vocab_size) + ": more than the " +
                std::to_string(kMaxVocabSize) + " token ids can number");
  if (options.threads < 1) throw Error("SentencePiece needs at least 1 thread");
  if (!utf8_valid(text)) utf8_decode(text, what);  // throws, naming the place
  std::unordered_map<std::string, std::string> args = {{"model_type", options.kind},
                                                       {"vocab_size", std::to_string(options.vocab_size)},
                                                       {"num_threads", std::to_string(options.threads)},
                                                       {"minloglevel", options.verbose ? "0" : "2"}};
  for (const auto& [flag, value] : sentencepiece_flags()) args[flag] = value;
  const TrainingLines survey = survey_lines(text);
  if (const std::string why = nothing_to_learn(survey, src); !why.empty()) throw Error(why);
  if ((survey.too_long > 0 || survey.rare_mark > 0) && options.log) {
    std::string left;
    if (survey.too_long > 0)
      left += std::to_string(survey.too_long) + " line(s) longer than " + std::to_string(kMaxSentenceBytes) +
              " bytes (line " + std::to_string(survey.first_too_long) + " the first)";
    if (survey.rare_mark > 0)
      left += (left.empty() ? "" : " and ") + std::to_string(survey.rare_mark) +
              " line(s) holding U+2585 '\u2585', which SentencePiece reserves (line " +
              std::to_string(survey.first_rare_mark) + " the first)";
    std::fprintf(options.log, "note: %s: the %s tokenizer does not learn from %s\n", src.c_str(),
                 options.kind.c_str(), left.c_str());
  }
  LineIterator lines(text);
  std::string model;
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &lines, &model);
  if (!status.ok()) {
    const std::string message = status.error_message();
    const std::string flag = "--vocab-size " + std::to_string(options.vocab_size);
    if (message.find("Vocabulary size is smaller than required_chars") != std::string::npos) {
      // SentencePiece's own count ("261 vs 325") when it gives one, else potop's.
      long need = number_after(message, " vs ");
      if (need < 0) need = survey.alphabet + kMetaPieces;
      throw Error(flag + " is too small for " + src + ": its " + std::to_string(need - kMetaPieces) +
                  " distinct characters (all but the rarest, left to byte pieces) each need a " + options.kind +
                  " piece besides the " + std::to_string(kSpecialCount) +
                  " special tokens and the 256 byte pieces, so at least " + std::to_string(need) +
                  "; use --vocab-size " + std::to_string(need) + " or more");
    }
    if (message.find("Vocabulary size too high") != std::string::npos) {
      const long most = number_after(message, "<= ");
      if (most >= kMin)
        throw Error(flag + " is too large for " + src + ": SentencePiece finds only " + std::to_string(most) + " " +
                    options.kind + " pieces in it (special tokens and byte pieces included); use --vocab-size " +
                    std::to_string(most) + " or less, or more text");
      throw Error(flag + " is too large for " + src + ": SentencePiece finds fewer " + options.kind +
                  " pieces in it; use a smaller --vocab-size, or more text");
    }
    throw Error(src + ": SentencePiece cannot train a " + options.kind + " vocabulary of " +
                std::to_string(options.vocab_size) + ": " + without_source_position(message));
  }
  return from_model(std::move(model), src + ": the trained model");
}

void SentencePieceTokenizer::check_id(int id) const {
  if (id < 0 || id >= size())
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary (ids 0.." + std::to_string(size() - 1) +
                ")");
}

void SentencePieceTokenizer::encode_line(std::string_view line, long line_number, std::string_view what,
                                         Unknown unknown, UnknownReport* report, std::vector<int>& ids) const {
  // U+2581 would come back as a space: an unknown character, like one a char model lacks.
  std::string cleaned;
  if (line.find(kSpaceMark) != std::string_view::npos) {
    if (unknown == Unknown::kError)
      throw Error(std::string(what) + " contains " + describe_char(U'\u2581') + " on line " +
                  std::to_string(line_number) + ", which SentencePiece reserves for the space");
    for (size_t at = 0;;) {
      const size_t mark = line.find(kSpaceMark, at);
      cleaned.append(line.substr(at, mark == std::string_view::npos ? std::string_view::npos : mark - at));
      if (mark == std::string_view::npos) break;
      if (unknown == Unknown::kReplace) cleaned += ' ';
      if (report) report->add(U'\u2581', line_number);
      at = mark + kSpaceMark.size();
    }
    line = cleaned;
  }
  if (word_cache_ok_) {
    const size_t before = ids.size();
    bool known = true;
    for (size_t start = 0; start < line.size() && known;) {
      size_t end = line.find_first_not_of(' ', start);
      end = end == std::string_view::npos ? line.size() : line.find(' ', end);
      if (end == std::string_view::npos) end = line.size();
      known = encode_word(line.substr(start, end - start), ids);
      start = end;
    }
    if (known) return;
    ids.resize(before);  // a character the model lacks: the whole line below, which names it
  }
  std::vector<int> line_ids;
  const auto status = sp_->Encode(line, &line_ids);
  if (!status.ok()) throw Error(std::string(what) + ": line " + std::to_string(line_number) + ": " + status.error_message());
  if (std::find(line_ids.begin(), line_ids.end(), specials_.unk) == line_ids.end()) {
    ids.insert(ids.end(), line_ids.begin(), line_ids.end());
    return;
  }
  // Characters the model lacks (a model without byte fallback): say which.
  const auto pieces = sp_->EncodeAsImmutableProto(line);
  for (size_t i = 0; i < pieces.pieces_size(); ++i) {
    const auto piece = pieces.pieces(static_cast<int>(i));
    const int id = static_cast<int>(piece.id());
    if (id != specials_.unk) {
      ids.push_back(id);
      continue;
    }
    const std::u32string chars = utf8_decode(piece.surface(), what);
    if (unknown == Unknown::kError)
      throw Error(std::string(what) + " contains " + describe_char(chars.empty() ? U'?' : chars[0]) + " on line " +
                  std::to_string(line_number) + ", which the tokenizer cannot encode");
    if (unknown == Unknown::kReplace) ids.push_back(specials_.unk);
    if (report)
      for (const char32_t c : chars) report->add(c, line_number);
  }
}

bool SentencePieceTokenizer::encode_word(std::string_view word, std::vector<int>& ids) const {
  {
    const std::lock_guard lock(cache_mutex_);
    if (const auto it = cache_.find(word); it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return true;
    }
  }
  std::vector<int> word_ids;
  if (!sp_->Encode(word, &word_ids).ok()) return false;
  if (std::find(word_ids.begin(), word_ids.end(), specials_.unk) != word_ids.end()) return false;
  ids.insert(ids.end(), word_ids.begin(), word_ids.end());
  const std::lock_guard lock(cache_mutex_);
  if (cache_.size() >= kMaxCachedWords) cache_.clear();
  cache_.emplace(std::string(word), std::move(word_ids));
  return true;
}

std::vector<int> SentencePieceTokenizer::encode(std::string_view text, std::string_view what, Unknown unknown,
                                                UnknownReport* report) const {
  if (!utf8_valid(text)) utf8_decode(text, what);  // throws, naming the place
  std::vector<int> ids;
  ids.reserve(text.size() / 3 + 1);
  long line_number = 1;
  for (size_t start = 0;; ++line_number) {
    const size_t end = text.find('\n', start);
    encode_line(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start), line_number,
                what, unknown, report, ids);
    if (end == std::string_view::npos) break;
    if (newline_id_ >= 0) {
      ids.push_back(newline_id_);
    } else {
      if (unknown == Unknown::kError)
        throw Error(std::string(what) + " contains " + describe_char(U'\n') + " on line " +
                    std::to_string(line_number) + ", which the tokenizer cannot encode");
      if (unknown == Unknown::kReplace) ids.push_back(specials_.unk);
      if (report) report->add(U'\n', line_number);
    }
    start = end + 1;
  }
  return ids;
}

bool SentencePieceTokenizer::can_encode(std::string_view text) const {
  if (!utf8_valid(text) || text.find(kSpaceMark) != std::string_view::npos) return false;
  if (byte_fallback_ && newline_id_ >= 0) return true;
  UnknownReport report;
  encode(text, "text", Unknown::kSkip, &report);
  return report.count == 0;
}

std::string SentencePieceTokenizer::decode(std::span<const int> ids) const {
  for (const int id : ids) check_id(id);
  // Line by line, as encoded: SentencePiece's decoder treats the start of its input specially
  // (a model with a dummy prefix drops the first space).
  std::string out;
  std::vector<int> line;
  for (size_t i = 0;; ++i) {
    if (i == ids.size() || ids[i] == newline_id_) {
      std::string text;
      const auto status = sp_->Decode(line, &text);
      if (!status.ok()) throw Error(std::string("SentencePiece cannot decode: ") + status.error_message());
      out += text;
      if (i == ids.size()) break;
      out += '\n';
      line.clear();
    } else {
      line.push_back(ids[i]);
    }
  }
  return utf8_repair(out);
}

std::string SentencePieceTokenizer::decode_one(int id) const {
  check_id(id);
  return text_[static_cast<size_t>(id)];
}

std::string SentencePieceTokenizer::piece(int id) const {
  check_id(id);
  return sp_->IdToPiece(id);
}

int SentencePieceTokenizer::char_count(int id) const { return count_char_starts(decode_one(id)); }

uint64_t SentencePieceTokenizer::hash() const { return fnv1a64(model_); }

nlohmann::json SentencePieceTokenizer::to_json() const { return {{"kind", kind_}, {"model", base64_encode(model_)}}; }

void SentencePieceTokenizer::save_files(const std::filesystem::path& dir) const {
  write_file_atomic(dir / tokenizer_file(kind()), model_);
  std::string vocab;
  for (int id = 0; id < size(); ++id) {
    char score[32];
    std::snprintf(score, sizeof score, "%g", sp_->GetScore(id));
    vocab += sp_->IdToPiece(id) + "\t" + score + "\n";
  }
  write_file_atomic(dir / "tokenizer.vocab", vocab);
}

// --- base64 ----------------------------------------------------------------------------------

namespace {
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = uint32_t(p[i]) << 16 | uint32_t(p[i + 1]) << 8 | p[i + 2];
    for (int k = 3; k >= 0; --k) out += kBase64[(v >> (6 * k)) & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    const uint32_t v = uint32_t(p[i]) << 16 | (rest == 2 ? uint32_t(p[i + 1]) << 8 : 0);
    out += kBase64[(v >> 18) & 63];
    out += kBase64[(v >> 12) & 63];
    out += rest == 2 ? kBase64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string base64_decode(std::string_view text, std::string_view source) {
  static const std::array<int, 256> value = [] {
    std::array<int, 256> v;
    v.fill(-1);
    for (int i = 0; i < 64; ++i) v[static_cast<unsigned char>(kBase64[i])] = i;
    return v;
  }();
  if (text.size() % 4 != 0)
    throw Error(std::string(source) + ": not base64 (its length, " + std::to_string(text.size()) +
                ", is not a multiple of 4)");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      const bool last_group = i + 4 == text.size();
      if (c == '=' && last_group && k >= 2 && (k == 3 || text[i + 3] == '=')) {
        ++pad;
        v <<= 6;
        continue;
      }
      if (value[c] < 0 || pad > 0)
        throw Error(std::string(source) + ": not base64 (character " + std::to_string(i + k) + ")");
      v = v << 6 | static_cast<uint32_t>(value[c]);
    }
    out += static_cast<char>(v >> 16);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xFF);
    if (pad < 1) out += static_cast<char>(v & 0xFF);
  }
  return out;
}

}  // namespace potop
