// GPT-2's byte-to-unicode alphabet: byte-level BPE vocabularies (GPT-2's vocab.json, llama.cpp's
// "gpt2" GGUF vocabularies, Hugging Face's ByteLevel pre-tokenizer) spell a token's bytes as
// printable characters, byte b as itself where it is printable (33..126, 161..172, 174..255) and
// as U+0100 onwards otherwise, in order: a space is "Ġ" (U+0120), a newline "Ċ" (U+010A).
#pragma once
#include <string>
#include <string_view>

namespace potop {

// The character byte b stands for, as UTF-8.
const std::string& byte_level_char(unsigned char b);
// bytes spelled in that alphabet.
std::string byte_level(std::string_view bytes);
// The bytes a string in that alphabet stands for; false (out untouched past what it wrote) when
// it holds a character outside the alphabet or is not valid UTF-8.
bool byte_level_bytes(std::string_view text, std::string& out);

}  // namespace potop
