// libFuzzer target: the HTTP request framer (serve/request_frame.h), which decides where each
// request a connection sends ends before any handler sees it. Any bytes must frame, wait or be
// refused, never crash; and the verdict must be the same whatever follows the head (a request
// framed from more bytes is the one framed from its head alone), or two readers of the same
// connection could disagree on where the next request starts (request smuggling).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "serve/request_frame.h"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace potop::serve;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const FrameLimits limits{512, 4096};  // small caps, so that the fuzzer reaches them
  const size_t blank = leading_blank_lines(bytes);
  require(blank <= bytes.size());
  const std::string_view request = bytes.substr(blank);
  const RequestFrame f = frame_request(request, limits);
  switch (f.state) {
    case RequestFrame::State::kHeadRead: {
      require(f.head_bytes >= 4 && f.head_bytes <= request.size() && f.head_bytes <= limits.max_head_bytes);
      require(f.body_bytes <= limits.max_body_bytes);
      const std::string_view head = request.substr(0, f.head_bytes);
      require(head.ends_with("\n"));
      // The head alone frames the same request; one byte less of it is not yet a request.
      const RequestFrame alone = frame_request(head, limits);
      require(alone.state == RequestFrame::State::kHeadRead && alone.head_bytes == f.head_bytes &&
              alone.body_bytes == f.body_bytes && alone.expect_continue == f.expect_continue);
      require(frame_request(head.substr(0, head.size() - 1), limits).state != RequestFrame::State::kHeadRead);
      // Without its Expect header (the server answers 100-continue itself), the head frames the
      // same body, and asks for no 100 any more.
      const std::string without = without_expect(head);
      const RequestFrame plain = frame_request(without, limits);
      require(plain.state == RequestFrame::State::kHeadRead && plain.head_bytes == without.size() &&
              plain.body_bytes == f.body_bytes && !plain.expect_continue);
      break;
    }
    case RequestFrame::State::kRefused:
      require(f.status >= 400 && f.status < 600 && !f.code.empty() && !f.message.empty());
      require(reason_phrase(f.status) != nullptr);
      break;
    case RequestFrame::State::kIncomplete:
      require(request.size() <= limits.max_head_bytes);
      break;
  }
  return 0;
}
