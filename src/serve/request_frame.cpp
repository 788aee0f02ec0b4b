#include "serve/request_frame.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace potop::serve {

namespace {

RequestFrame refused(int status, std::string code, std::string message) {
  RequestFrame f;
  f.state = RequestFrame::State::kRefused;
  f.status = status;
  f.code = std::move(code);
  f.message = std::move(message);
  return f;
}

RequestFrame malformed(const std::string& what) { return refused(400, "bad_request", "malformed request: " + what); }

// RFC 9110's tchar: what a method or a header name is made of.
bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
  });
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

// "METHOD SP target SP HTTP/1.x", nothing else.
bool valid_request_line(std::string_view line, std::string_view& method) {
  const size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return false;
  const size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) return false;
  method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1), version = line.substr(sp2 + 1);
  const bool printable_target = !target.empty() && std::all_of(target.begin(), target.end(), [](unsigned char c) {
    return c > 0x20 && c != 0x7f;
  });
  return is_token(method) && printable_target && (version == "HTTP/1.1" || version == "HTTP/1.0");
}

// The value of a Content-Length: digits only, and small enough for 64 bits.
bool parse_length(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

}  // namespace

size_t leading_blank_lines(std::string_view bytes) {
  size_t n = 0;
  while (bytes.substr(n, 2) == "\r\n") n += 2;
  return n;
}

RequestFrame frame_request(std::string_view bytes, const FrameLimits& limits) {
  const std::string_view window = bytes.substr(0, limits.max_head_bytes);
  const size_t end = window.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (bytes.size() >= limits.max_head_bytes)
      return refused(431, "request_header_fields_too_large",
                     "the request's line and headers are over " + std::to_string(limits.max_head_bytes >> 10) +
                         " KiB");
    return RequestFrame{};
  }
  const std::string_view head = bytes.substr(0, end + 2);  // every line with its CRLF
  if (head.find('\0') != std::string_view::npos) return malformed("a NUL byte in its head");

  RequestFrame f;
  f.state = RequestFrame::State::kHeadRead;
  f.head_bytes = end + 4;
  std::string_view method;
  bool has_length = false;
  for (size_t at = 0, line_no = 0; at < head.size(); ++line_no) {
    const size_t eol = head.find("\r\n", at);
    const std::string_view line = head.substr(at, eol - at);
    at = eol + 2;
    if (line.find_first_of("\r\n") != std::string_view::npos) return malformed("a bare CR or LF in its head");
    if (line_no == 0) {
      if (!valid_request_line(line, method)) return malformed("the request line is not 'METHOD target HTTP/1.1'");
      continue;
    }
    const size_t colon = line.find(':');
    if (line.empty() || line.front() == ' ' || line.front() == '\t') return malformed("a header folded onto the next line");
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
      return malformed("a header line is not 'name: value'");
    const std::string_view name = line.substr(0, colon), value = trim(line.substr(colon + 1));
    if (same_name(name, "Content-Length")) {
      uint64_t length = 0;
      if (has_length) return malformed("two Content-Length headers");
      if (!parse_length(value, length)) return malformed("Content-Length '" + std::string(value) + "' is not a number");
      if (length > limits.max_body_bytes)
        return refused(413, "request_too_large",
                       "the request body is too large: " + std::string(value) + " bytes, at most " +
                           std::to_string(limits.max_body_bytes) + " (potop serve --max-body-kib)");
      has_length = true;
      f.body_bytes = static_cast<size_t>(length);
    } else if (same_name(name, "Transfer-Encoding")) {
      if (lower(value) != "identity")
        return refused(411, "length_required",
                       "a request body must come with a Content-Length (chunked bodies are not taken)");
    } else if (same_name(name, "Expect")) {
      f.expect_continue = lower(value) == "100-continue";
    }
  }
  if (!has_length && (method == "POST" || method == "PUT" || method == "PATCH"))
    return refused(411, "length_required",
                   "a " + std::string(method) + " must give its body's length in a Content-Length header");
  return f;
}

std::string without_expect(std::string_view head) {
  std::string out;
  out.reserve(head.size());
  for (size_t at = 0; at < head.size();) {
    size_t eol = head.find("\r\n", at);
    eol = eol == std::string_view::npos ? head.size() : eol + 2;
    const std::string_view line = head.substr(at, eol - at);
    const size_t colon = line.find(':');
    if (at == 0 || colon == std::string_view::npos || !same_name(line.substr(0, colon), "Expect")) out.append(line);
    at = eol;
  }
  return out;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

}  // namespace potop::serve
