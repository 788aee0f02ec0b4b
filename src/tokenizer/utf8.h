// Strict UTF-8 (RFC 3629): bytes <-> Unicode code points.
// potop models characters, so every text (corpus, prompt, vocab.json) is decoded here first.
// Decoding rejects everything RFC 3629 forbids — overlong forms, encoded surrogates
// (U+D800..U+DFFF), values above U+10FFFF, truncated sequences, stray continuation bytes and
// the bytes that can never start a sequence (0xC0, 0xC1, 0xF5..0xFF) — and names the first
// offending byte, so a user can find it in the file.
#pragma once
#include <string>
#include <string_view>

namespace potop {

// Decodes UTF-8 bytes to code points. On invalid input throws potop::Error:
//   "<source>: invalid UTF-8 at byte offset 12345 (line 7): unexpected continuation byte 0x9A"
// The offset is 0-based and points at the first byte of the bad sequence (for a stray
// continuation byte or an invalid lead byte, that byte itself); the line is 1-based.
// A byte-order mark is decoded like any other character (U+FEFF).
std::u32string utf8_decode(std::string_view bytes, std::string_view source);

// True when utf8_decode would succeed.
bool utf8_valid(std::string_view bytes);

// The bytes with every byte that is not part of a valid sequence replaced by U+FFFD (one per
// byte): what decoding byte tokens a model sampled gives. Valid UTF-8 comes back unchanged.
std::string utf8_repair(std::string_view bytes);

// True for a Unicode scalar value: <= U+10FFFF and not a surrogate.
inline bool is_scalar_value(char32_t cp) { return cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF); }

// Appends the UTF-8 encoding of cp (1 to 4 bytes). cp must be a scalar value (POTOP_CHECK).
void utf8_append(std::string& out, char32_t cp);
std::string utf8_encode(std::u32string_view text);
std::string utf8_encode(char32_t cp);

// A code point for messages: "'ż' (U+017C)", "' ' (U+0020)", "newline (U+000A)",
// "tab (U+0009)"; other control characters, surrogates and non-characters just "U+0007".
std::string describe_char(char32_t cp);
// "U+017C" (at least four uppercase hex digits).
std::string code_point_name(char32_t cp);

}  // namespace potop
