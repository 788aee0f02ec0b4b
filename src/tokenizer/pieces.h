// Helpers the tokenizer kinds share: how a token is shown (Tokenizer::piece) and how many
// characters a byte string starts (Tokenizer::char_count).
#pragma once
#include <string>
#include <string_view>

namespace potop {

// A token's text for display: a space becomes "▁" (U+2581, as in SentencePiece's pieces); a
// control character, any other whitespace, a stray byte (not valid UTF-8) — and a text made only
// of invisible format characters such as U+200D — become "<0x0A>"-style bytes. Not empty for
// a non-empty text.
std::string display_piece(std::string_view text);

// The number of bytes that start a character: ASCII bytes and UTF-8 lead bytes, not
// continuation bytes (0x80..0xBF). For valid UTF-8, its number of code points.
int count_char_starts(std::string_view bytes);

// Throws potop::Error "token id 7 is outside the vocabulary (ids 0..5)" unless 0 <= id < size.
void check_token_id(int id, int size);

// "<0x0A>": how SentencePiece names a byte piece.
std::string byte_piece(unsigned char b);

}  // namespace potop
