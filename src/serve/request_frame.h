// Where one HTTP/1.1 request ends in the bytes a connection has sent: its line and headers, then
// exactly Content-Length bytes of body. The server reads a whole request this way before any
// handler sees it (serve/guarded_http_server.h), and hands the handlers those bytes and no more,
// so a handler that answers without reading the body (a 401, a 403, a 415) can never leave bytes
// behind to be parsed as the next request: there is no request smuggling past a refusal.
//
// Anything whose length this cannot tell for sure is refused, and its connection closed: a head
// longer than the cap (431), a chunked body (411: its size would be the client's to choose), a
// POST, PUT or PATCH without a Content-Length (411), a Content-Length over the body cap (413, at
// once, before a byte of the body is read), two Content-Lengths or one that is not a number, a
// header line folded onto the next, a line that is not "name: value" (400).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace potop::serve {

struct FrameLimits {
  size_t max_head_bytes = 16 << 10;  // the request line and every header together (431 beyond)
  size_t max_body_bytes = 1 << 20;   // a larger Content-Length gets 413
};

struct RequestFrame {
  enum class State { kIncomplete, kHeadRead, kRefused };
  State state = State::kIncomplete;
  // kHeadRead: the request is head_bytes + body_bytes long (the head's blank line included).
  size_t head_bytes = 0, body_bytes = 0;
  bool expect_continue = false;  // "Expect: 100-continue": the client waits for a 100 before its body
  // kRefused: the answer, then the connection closes.
  int status = 0;
  std::string code, message;
};

// Frames the request at the start of `bytes` (what the connection has sent since its last request
// ended). kIncomplete: its head has not all arrived yet (and is still within the cap).
RequestFrame frame_request(std::string_view bytes, const FrameLimits& limits);

// The blank lines a client may send between two requests (RFC 9112 2.2): how many bytes of them
// `bytes` starts with.
size_t leading_blank_lines(std::string_view bytes);

// `head` without its Expect header: the server answers 100-continue itself, while the body is
// still arriving, so the handlers must not answer it again.
std::string without_expect(std::string_view head);

// The reason phrase of a status the server answers before any handler (408, 411, 413, 429, ...).
const char* reason_phrase(int status);

}  // namespace potop::serve
