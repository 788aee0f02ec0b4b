// A potop tokenizer as llama.cpp's tokenizer metadata (tokenizer.ggml.*), chosen so that
// llama.cpp turns a text into the ids potop does (docs/export.md has the table and the reasons):
//   char     "gpt2" byte-level BPE: one token per character, as its UTF-8 bytes in GPT-2's
//            byte-to-unicode alphabet, and merges that only rebuild each multi-byte character
//            from its bytes (so no merge crosses a character, whatever the pre-tokenizer splits)
//   byte     "gpt2" byte-level BPE with no merges: the 4 specials, then the 256 bytes
//   bpe      "llama" (SentencePiece BPE): the pieces, their scores, their types, byte fallback
//   unigram  "t5" (SentencePiece unigram, llama.cpp's UGM): the pieces and their scores
//   byte_bpe "gpt2" with its own tokens and merges and GPT-2's pre-tokenizer ("gpt-2")
//   word     refused: llama.cpp has no tokenizer that splits words as potop's does
// No BOS is added (tokenizer.ggml.add_bos_token false) and no space prefix, as potop adds none.
#pragma once
#include <string>
#include <vector>

#include "export/gguf_writer.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// Adds tokenizer.ggml.* for `tokenizer` to w. Notes (what llama.cpp will do differently, such as
// the token it must stop at) are appended to `notes`, one line each. Throws potop::Error for a
// kind llama.cpp cannot reproduce.
void add_gguf_vocab(GgufWriter& w, const Tokenizer& tokenizer, std::vector<std::string>& notes);

}  // namespace potop
