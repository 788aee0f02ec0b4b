// Where a request ends (serve/request_frame.h): its head and exactly Content-Length bytes, and
// every head whose length is not sure refused with the status that says why.
#include <gtest/gtest.h>

#include <string>

#include "serve/request_frame.h"

namespace potop::serve {
namespace {

using State = RequestFrame::State;

RequestFrame frame(const std::string& bytes, size_t max_body = 100) {
  return frame_request(bytes, FrameLimits{1024, max_body});
}

TEST(RequestFrame, AHeadAndItsBody) {
  const std::string head = "POST /v1/completions HTTP/1.1\r\nHost: x\r\ncontent-length:  7 \r\n\r\n";
  const RequestFrame f = frame(head + "{\"a\":1}GET / HTTP/1.1\r\n");
  ASSERT_EQ(f.state, State::kHeadRead);
  EXPECT_EQ(f.head_bytes, head.size());
  EXPECT_EQ(f.body_bytes, 7u);
  EXPECT_FALSE(f.expect_continue);
  const RequestFrame get = frame("GET /health HTTP/1.0\r\n\r\n");
  ASSERT_EQ(get.state, State::kHeadRead);
  EXPECT_EQ(get.body_bytes, 0u);
  EXPECT_TRUE(frame("PUT / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n").expect_continue);
}

TEST(RequestFrame, IncompleteUntilTheBlankLineThen431PastTheCap) {
  EXPECT_EQ(frame("GET / HTTP/1.1\r\nHost: x\r\n").state, State::kIncomplete);
  EXPECT_EQ(frame("GET / HTTP/1.1\r\nHost: x\r\n\r").state, State::kIncomplete);
  const RequestFrame f = frame("GET / HTTP/1.1\r\nX: " + std::string(1100, 'a'));
  EXPECT_EQ(f.state, State::kRefused);
  EXPECT_EQ(f.status, 431);
  // A head that ends exactly at the cap is whole; one byte more is not.
  const std::string line = "GET / HTTP/1.1\r\nX: ";
  const std::string exact = line + std::string(1024 - line.size() - 4, 'a') + "\r\n\r\n";
  EXPECT_EQ(frame(exact).state, State::kHeadRead);
  EXPECT_EQ(frame(line + "a" + exact.substr(line.size())).status, 431);
}

TEST(RequestFrame, RefusesEveryLengthItCannotBeSureOf) {
  struct Case {
    std::string head;
    int status;
  };
  const Case cases[] = {
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 411},
      {"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 411},
      {"POST / HTTP/1.1\r\nHost: x\r\n\r\n", 411},
      {"PATCH / HTTP/1.1\r\n\r\n", 411},
      {"POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", 413},
      {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length : 3\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nX: a\nContent-Length: 5\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nno colon\r\n\r\n", 400},
      {"GET /a b HTTP/1.1\r\n\r\n", 400},
      {"GET / HTTP/2.0\r\n\r\n", 400},
      {"G@T / HTTP/1.1\r\n\r\n", 400},
      {std::string("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 26), 400},
  };
  for (const Case& c : cases) {
    const RequestFrame f = frame(c.head);
    EXPECT_EQ(f.state, State::kRefused) << c.head;
    EXPECT_EQ(f.status, c.status) << c.head << f.message;
    EXPECT_FALSE(f.message.empty());
  }
  // Identity is no encoding at all: the Content-Length frames it.
  EXPECT_EQ(frame("POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nhi").state, State::kHeadRead);
}

TEST(RequestFrame, BlankLinesBetweenRequestsAndTheExpectHeaderRemoved) {
  EXPECT_EQ(leading_blank_lines("\r\n\r\nGET"), 4u);
  EXPECT_EQ(leading_blank_lines("\r\rGET"), 0u);
  EXPECT_EQ(without_expect("POST / HTTP/1.1\r\nexpect: 100-continue\r\nContent-Length: 1\r\n\r\n"),
            "POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\n");
}

}  // namespace
}  // namespace potop::serve
