#include "export/gguf_vocab.h"

#include <sentencepiece_processor.h>

#include <set>

#include "core/error.h"
#include "tokenizer/byte_bpe_tokenizer.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/byte_tokenizer.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/utf8.h"

namespace potop {

namespace {

// llama.cpp's token types (llama_token_type).
enum : int32_t { kNormal = 1, kUnknownType = 2, kControl = 3, kUnused = 5, kByte = 6 };

// The keys every mapping writes: ids of the special tokens (llama.cpp needs a BOS and an EOS id;
// it stops generating at the EOS), and nothing added to a prompt.
void add_specials(GgufWriter& w, int bos, int eos, int unk, int pad) {
  w.add_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(bos));
  w.add_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(eos));
  if (unk >= 0) w.add_u32("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(unk));
  if (pad >= 0) w.add_u32("tokenizer.ggml.padding_token_id", static_cast<uint32_t>(pad));
  w.add_bool("tokenizer.ggml.add_bos_token", false);
  w.add_bool("tokenizer.ggml.add_eos_token", false);
}

// Byte-level BPE ("gpt2"). The pre-tokenizer "qwen2" only decides where merges may apply, and
// none of potop's crosses a character; it is the one of llama.cpp's that does not "clean up"
// spaces before punctuation when detokenizing, so text comes back as potop decodes it.
void add_byte_level(GgufWriter& w, const std::vector<std::string>& tokens, const std::vector<int32_t>& types,
                    const std::vector<std::string>& merges) {
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "qwen2");
  w.add_strings("tokenizer.ggml.tokens", tokens);
  w.add_i32s("tokenizer.ggml.token_type", types);
  w.add_strings("tokenizer.ggml.merges", merges);
}

// One token per character: its UTF-8 bytes in the byte-level alphabet. A character of n bytes
// needs the merges of its prefixes (b0 b1, b0b1 b2, ...): llama.cpp starts from single bytes.
// A byte that continues a character never starts one, so a merge never joins two characters.
void add_char_vocab(GgufWriter& w, const CharTokenizer& t, std::vector<std::string>& notes) {
  std::vector<std::string> tokens, merges;
  std::set<std::string> seen;
  for (int id = 0; id < t.size(); ++id) {
    const std::string bytes = utf8_encode(t.char_of(id));
    tokens.push_back(byte_level(bytes));
    for (size_t n = 2; n <= bytes.size(); ++n) {
      std::string merge = byte_level(bytes.substr(0, n - 1)) + " " + byte_level(bytes.substr(n - 1, 1));
      if (seen.insert(merge).second) merges.push_back(std::move(merge));
    }
  }
  // llama.cpp needs an end-of-text token and a char vocabulary has none: the newline stands in
  // (a paragraph's end), else id 0.
  const int eos = std::max(t.id_of(U'\n'), 0);
  add_byte_level(w, tokens, std::vector<int32_t>(tokens.size(), kNormal), merges);
  add_specials(w, eos, eos, -1, -1);
  notes.push_back("the char vocabulary has no end-of-text token; llama.cpp stops at token " + std::to_string(eos) +
                  " (" + t.piece(eos) + ") unless told to ignore it (llama-cli --ignore-eos)");
  notes.push_back("a character outside the vocabulary, which potop refuses, llama.cpp leaves out");
}

void add_byte_vocab(GgufWriter& w, std::vector<std::string>& notes) {
  std::vector<std::string> tokens(kSpecialPieces, kSpecialPieces + kSpecialCount);
  std::vector<int32_t> types(kSpecialCount, kControl);
  for (int b = 0; b < 256; ++b) tokens.push_back(byte_level_char(static_cast<unsigned char>(b))), types.push_back(kNormal);
  add_byte_level(w, tokens, types, {});
  add_specials(w, kBosId, kEosId, kUnkId, kPadId);
  (void)notes;
}

// A byte-level BPE: its tokens and merges as they are, with llama.cpp's name for its split
// expressions ("gpt-2" for GPT-2's own; llama_cpp_pre_tokenizer).
void add_byte_bpe_vocab(GgufWriter& w, const ByteBpeTokenizer& t, std::vector<std::string>& notes) {
  const std::string pre = llama_cpp_pre_tokenizer(t.options());
  if (pre.empty())
    throw Error("tokenizer: llama.cpp has no pre-tokenizer for its split expressions (it names GPT-2's, Llama 3's, "
                "Qwen2's and SmolLM's); export --format hf keeps them");
  std::vector<std::string> tokens;
  const int eot = t.specials().eos, bos = t.specials().bos;
  std::vector<int32_t> types(static_cast<size_t>(t.size()), kNormal);
  for (int id = 0; id < t.size(); ++id) tokens.push_back(t.piece(id));
  for (const int special : t.special_ids()) types[static_cast<size_t>(special)] = kControl;
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", pre);
  w.add_strings("tokenizer.ggml.tokens", tokens);
  w.add_i32s("tokenizer.ggml.token_type", types);
  w.add_strings("tokenizer.ggml.merges", t.merges());
  add_specials(w, std::max(bos, 0), std::max(eot, 0), -1, -1);
  if (eot < 0) notes.push_back("the vocabulary has no <|endoftext|>; llama.cpp stops at token 0 unless told to ignore it");
  notes.push_back("\"<|endoftext|>\" in a text, which potop encodes as characters, llama.cpp may read as the token");
}

// SentencePiece: its pieces (with U+2581 for a space), scores and types, its special ids, and its
// space prefix and whitespace squeezing as its normalizer says (potop's models have neither; an
// imported Llama 2's has the prefix).
void add_sentencepiece_vocab(GgufWriter& w, const SentencePieceTokenizer& t, std::vector<std::string>& notes) {
  sentencepiece::SentencePieceProcessor sp;
  if (!sp.LoadFromSerializedProto(t.model()).ok()) throw Error("the tokenizer's SentencePiece model does not load");
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  for (int id = 0; id < sp.GetPieceSize(); ++id) {
    tokens.push_back(sp.IdToPiece(id));
    scores.push_back(sp.GetScore(id));
    types.push_back(sp.IsControl(id) ? kControl : sp.IsUnknown(id) ? kUnknownType : sp.IsByte(id) ? kByte
                    : sp.IsUnused(id) ? kUnused : kNormal);
  }
  const bool unigram = t.kind() == "unigram";
  w.add_string("tokenizer.ggml.model", unigram ? "t5" : "llama");
  w.add_strings("tokenizer.ggml.tokens", tokens);
  w.add_f32s("tokenizer.ggml.scores", scores);
  w.add_i32s("tokenizer.ggml.token_type", types);
  w.add_bool("tokenizer.ggml.add_space_prefix", t.adds_dummy_prefix());  // an imported Llama 2's: true
  w.add_bool("tokenizer.ggml.remove_extra_whitespaces", t.removes_extra_whitespaces());
  add_specials(w, t.specials().bos, t.specials().eos, t.specials().unk, t.specials().pad);  // its own ids
  notes.push_back("U+2581, which potop refuses in a text, llama.cpp reads as a space");
  if (unigram)
    notes.push_back("llama.cpp's unigram tokenizer has no byte fallback: a character without a piece is <unk> there, "
                    "its bytes in potop");
  else if (!t.byte_fallback())
    notes.push_back("the model has no byte fallback: llama.cpp leaves out a character without a piece");
}

}  // namespace

void add_gguf_vocab(GgufWriter& w, const Tokenizer& tokenizer, std::vector<std::string>& notes) {
  if (const auto* c = dynamic_cast<const CharTokenizer*>(&tokenizer)) return add_char_vocab(w, *c, notes);
  if (dynamic_cast<const ByteTokenizer*>(&tokenizer)) return add_byte_vocab(w, notes);
  if (const auto* b = dynamic_cast<const ByteBpeTokenizer*>(&tokenizer)) return add_byte_bpe_vocab(w, *b, notes);
  if (const auto* s = dynamic_cast<const SentencePieceTokenizer*>(&tokenizer)) return add_sentencepiece_vocab(w, *s, notes);
  throw Error("tokenizer '" + tokenizer.kind() +
              "': llama.cpp has no tokenizer that gives its ids (char, byte, bpe, unigram and byte_bpe export)");
}

}  // namespace potop
