// Reading the training text. read_text_file returns the raw bytes, refusing with a message
// that names the path anything that cannot be a text corpus; read_utf8_file also decodes them.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace potop {

// The whole file as bytes. Throws potop::Error naming the path when the file is missing, is a
// directory or not a regular file (a device such as /dev/zero, a pipe: refused before reading),
// is too large for this machine's memory (checked from its size before reading), cannot be read,
// is empty, or looks binary (contains a NUL byte: "<path>: looks binary (NUL byte at offset 1234),
// expected UTF-8 text").
std::string read_text_file(const std::filesystem::path& path);

// read_text_file + strict UTF-8 decoding (errors give the byte offset and line). A leading
// byte-order mark (U+FEFF) is dropped: it marks the encoding and is not part of the text.
std::u32string read_utf8_file(const std::filesystem::path& path);
// The same checks, the text kept as UTF-8 bytes (what a Tokenizer encodes).
std::string read_utf8_text(const std::filesystem::path& path);

// FNV-1a-64 of decoded text (code points as 32-bit little-endian values): a training state keeps
// it, so resuming on another text is caught.
uint64_t hash_training_text(std::u32string_view text);

}  // namespace potop
