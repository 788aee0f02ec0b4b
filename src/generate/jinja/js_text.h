// What JavaScript does to strings and numbers, for the Jinja renderer (template.h): npm's
// @huggingface/jinja, the renderer whose output potop's must equal, runs on JavaScript's strings
// (UTF-16 code units) and numbers (doubles), so its lengths, indexes, whitespace, case mappings and
// number printing are JavaScript's, not Python's. Text here is UTF-8 and valid.
#pragma once
#include <string>
#include <string_view>

namespace potop::jinja {

// JavaScript's \s and String.prototype.trim's whitespace (White_Space, the line terminators and
// U+FEFF).
bool js_space(char32_t c);
std::string js_trim(std::string_view s);
std::string js_trim_start(std::string_view s);
std::string js_trim_end(std::string_view s);

// The string's length in UTF-16 code units (what .length and |length give).
long js_length(std::string_view s);
// toUpperCase / toLowerCase: Unicode's full case mappings ("ß" → "SS"), no locale.
std::string js_upper(std::string_view s);
std::string js_lower(std::string_view s);
// Compares as JavaScript's < does: by UTF-16 code units. -1, 0 or 1.
int js_compare(std::string_view a, std::string_view b);

// Number.prototype.toString (String(x)): "1", "0.1", "1e+21", "NaN", "-Infinity".
std::string js_number(double x);
// JSON.stringify of a string: quotes, \" \\ \b \f \n \r \t, other controls as \u00XX.
// ensure_ascii: also every code unit from U+007F up as \uXXXX (a surrogate pair as two).
std::string js_quote(std::string_view s, bool ensure_ascii = false);
// Number(s) for a string (loose equality): trimmed, "" is 0, decimal, Infinity, 0x/0o/0b; else NaN.
double js_to_number(std::string_view s);
// parseInt(s, 10) and parseFloat(s): the longest numeric prefix after whitespace; NaN if none.
double js_parse_int(std::string_view s);
double js_parse_float(std::string_view s);

// Decodes one code point at s[i] (valid UTF-8) and advances i.
char32_t next_code_point(std::string_view s, size_t& i);

}  // namespace potop::jinja
