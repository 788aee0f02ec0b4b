// The server's connection handling (serve/guarded_http_server.h), which replaces httplib's own
// keep-alive loop: keep-alive and pipelined requests still work through its socket stream, POST
// bodies of every size arrive whole, a streamed response goes out, the per-client cap counts and
// releases, the deadlines answer 408 (once, logged once), and stop() drops idle connections at once.
// tests/cli/serve_guard.sh checks the same against `potop serve` under attack.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "serve/connection_threads.h"
#include "serve/guarded_http_server.h"

namespace potop::serve {
namespace {

using namespace std::chrono_literals;

// A GuardedHttpServer on a free loopback port, listening on a thread of its own.
class Running {
 public:
  explicit Running(const ConnectionLimits& limits) : server(limits) {
    server.new_task_queue = [] { return new ConnectionThreads(16); };
    server.set_keep_alive_timeout(5);
    server.Get("/hi", [](const httplib::Request&, httplib::Response& res) { res.set_content("hi", "text/plain"); });
    server.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::to_string(req.body.size()), "text/plain");
    });
    server.Get("/stream", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [](size_t, httplib::DataSink& sink) {
        for (int i = 0; i < 100; ++i) sink.write("token ", 6);
        sink.done();
        return true;
      });
    });
    server.set_logger([this](const httplib::Request&, const httplib::Response& res) { logged += res.status; });
    server.set_refusal_logger([this](int status) { refused += status; });
    port = server.bind_to_any_port("127.0.0.1");
    listener = std::thread([this] { server.listen_after_bind(); });
  }
  ~Running() { stop(); }
  void stop() {
    server.stop();
    if (listener.joinable()) listener.join();
  }

  GuardedHttpServer server;
  int port = -1;
  std::thread listener;
  std::atomic<int> logged{0}, refused{0};  // sums of the statuses logged
};

// A raw client socket from the loopback address `from`.
int connect_from(int port, const char* from = "127.0.0.1") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  inet_pton(AF_INET, from, &local.sin_addr);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local), 0);
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &server.sin_addr);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof server), 0);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

void send_all(int fd, const std::string& s) { ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size())); }

// Reads until `count` occurrences of `marker` have arrived, or the peer closes.
std::string read_until(int fd, const std::string& marker, int count = 1) {
  std::string got;
  char buf[4096];
  for (;;) {
    int seen = 0;
    for (size_t at = got.find(marker); at != std::string::npos; at = got.find(marker, at + 1)) ++seen;
    if (seen >= count) return got;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return got;
    got.append(buf, static_cast<size_t>(n));
  }
}

const std::string kGet = "GET /hi HTTP/1.1\r\nHost: x\r\n\r\n";

TEST(GuardedHttpServer, KeepAliveAndPipelinedRequests) {
  Running r(ConnectionLimits{});
  const int fd = connect_from(r.port);
  send_all(fd, kGet);
  EXPECT_NE(read_until(fd, "\r\n\r\nhi").find("200 OK"), std::string::npos);
  send_all(fd, kGet + kGet + kGet);  // three in one write: each answered, in order
  const std::string three = read_until(fd, "\r\n\r\nhi", 3);
  size_t answers = 0;
  for (size_t at = three.find("HTTP/1.1 200 OK"); at != std::string::npos; at = three.find("HTTP/1.1 200 OK", at + 1)) ++answers;
  EXPECT_EQ(answers, 3u);
  ::close(fd);
  httplib::Client client("127.0.0.1", r.port);
  for (int i = 0; i < 4; ++i) {
    auto res = client.Get("/hi");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->body, "hi");
  }
}

TEST(GuardedHttpServer, BodiesOfEverySizeAndAStream) {
  Running r(ConnectionLimits{});
  httplib::Client client("127.0.0.1", r.port);
  for (size_t size : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{70000}, size_t{1} << 20}) {
    auto res = client.Post("/echo", std::string(size, 'x'), "application/json");
    ASSERT_TRUE(res) << size;
    EXPECT_EQ(res->body, std::to_string(size));
  }
  auto res = client.Get("/stream");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body.size(), 600u);
}

TEST(GuardedHttpServer, PerClientCapCountsAndReleases) {
  ConnectionLimits limits;
  limits.max_per_client = 2;
  Running r(limits);
  const int a = connect_from(r.port, "127.0.0.5"), b = connect_from(r.port, "127.0.0.5");
  for (int i = 0; i < 100 && r.server.connections_from("127.0.0.5") < 2; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(r.server.connections_from("127.0.0.5"), 2);
  const int c = connect_from(r.port, "127.0.0.5");
  send_all(c, kGet);
  const std::string refused = read_until(c, "}}");
  EXPECT_NE(refused.find("HTTP/1.1 429 Too Many Requests"), std::string::npos) << refused;
  EXPECT_NE(refused.find("too_many_connections"), std::string::npos);
  ::close(c);
  const int other = connect_from(r.port, "127.0.0.6");  // another address is served meanwhile
  send_all(other, kGet);
  EXPECT_NE(read_until(other, "\r\n\r\nhi").find("200 OK"), std::string::npos);
  ::close(other);
  ::close(a), ::close(b);
  for (int i = 0; i < 100 && r.server.connections_from("127.0.0.5") > 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(r.server.connections_from("127.0.0.5"), 0);
  EXPECT_EQ(r.refused, 429);
}

TEST(GuardedHttpServer, HeaderDeadlineAnswers408OnceAndLogsItOnce) {
  ConnectionLimits limits;
  limits.header_timeout_s = 0.5;
  Running r(limits);
  const int fd = connect_from(r.port);
  const auto start = std::chrono::steady_clock::now();
  send_all(fd, "GET /hi HTTP/1.1\r\n");
  std::string got;
  for (int i = 0; i < 20 && got.empty(); ++i) {  // a header line every 0.1 s: never done in time
    send_all(fd, "X-Slow: a\r\n");
    std::this_thread::sleep_for(100ms);
    char buf[1024];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) got.assign(buf, static_cast<size_t>(n));
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(got.find("HTTP/1.1 408 Request Timeout"), std::string::npos) << got;
  EXPECT_NE(got.find("--header-timeout"), std::string::npos);
  EXPECT_GT(took, 0.45);
  EXPECT_LT(took, 1.5);
  ::close(fd);
  r.stop();
  EXPECT_EQ(r.refused, 408);
  EXPECT_EQ(r.logged, 0);  // not also httplib's own 400
}

TEST(GuardedHttpServer, StopDropsIdleConnectionsAtOnce) {
  Running r(ConnectionLimits{});
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(connect_from(r.port));
  const int half = connect_from(r.port);
  send_all(half, "GET /hi HTTP/1.1\r\n");  // a request half sent
  std::this_thread::sleep_for(200ms);
  const auto start = std::chrono::steady_clock::now();
  r.stop();  // httplib waits for every connection's thread
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  for (int fd : idle) ::close(fd);
  ::close(half);
}

}  // namespace
}  // namespace potop::serve
