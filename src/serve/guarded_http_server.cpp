#include "serve/guarded_http_server.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "serve/api_error.h"
#include "serve/http_json.h"

namespace potop::serve {

namespace {

using Clock = std::chrono::steady_clock;

// How often a wait for a client looks whether the server is stopping.
constexpr auto kStopCheck = std::chrono::milliseconds(100);

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// The numeric address (and port) of a socket's peer or of its own end; "" when it has none.
std::string socket_address(int sock, bool peer, int* port) {
  sockaddr_storage addr{};
  socklen_t length = sizeof addr;
  auto* a = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? ::getpeername(sock, a, &length) : ::getsockname(sock, a, &length)) != 0) return "";
  char host[NI_MAXHOST], service[NI_MAXSERV];
  if (::getnameinfo(a, length, host, sizeof host, service, sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "";
  if (port) *port = std::atoi(service);
  return host;
}

// Whether the request this thread is reading was refused with 408 (RequestStream::refuse_late):
// httplib, whose reads then fail, goes on to log a 400 of its own that no client ever got.
thread_local bool request_refused = false;

enum class Wait { kReady, kTimedOut, kStopping, kFailed };

// Waits until `sock` has `events` (POLLIN, POLLOUT; a hang-up or an error counts too: the read or
// write that follows says which) or `until` passes. With `listening`, also until the server stops
// (httplib sets its listening socket invalid).
Wait wait_for(int sock, short events, Clock::time_point until, const std::atomic<socket_t>* listening) {
  for (;;) {
    const Clock::duration left = std::max(until - Clock::now(), Clock::duration::zero());
    const Clock::duration slice = listening ? std::min<Clock::duration>(left, kStopCheck) : left;
    pollfd p{sock, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::ceil(std::chrono::duration<double, std::milli>(slice).count())));
    if (rc > 0) return Wait::kReady;
    if (rc < 0 && errno != EINTR) return Wait::kFailed;
    if (listening && listening->load() == INVALID_SOCKET) return Wait::kStopping;
    if (rc == 0 && Clock::now() >= until) return Wait::kTimedOut;
  }
}

// Answers `error` and closes the connection's sending side without reading the request. The
// client may still be sending: closing outright would answer it with a reset, which can discard
// our answer before the client reads it, so what it sends is read and dropped for a moment first.
void refuse(int sock, const ApiError& error, const char* reason) {
  const std::string body = dump(error.body());
  std::string response = "HTTP/1.1 ";
  response.append(std::to_string(error.status)).append(" ").append(reason).append("\r\n");
  response.append("Content-Type: application/json\r\nContent-Length: ").append(std::to_string(body.size()));
  response.append("\r\nConnection: close\r\n");
  if (error.status == 429) response.append("Retry-After: 1\r\n");
  response.append("\r\n").append(body);
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(1);
  for (size_t sent = 0; sent < response.size();) {
    if (wait_for(sock, POLLOUT, give_up, nullptr) != Wait::kReady) return;
    const ssize_t n = ::send(sock, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
  ::shutdown(sock, SHUT_WR);
  const Clock::time_point linger = Clock::now() + std::chrono::milliseconds(250);
  std::array<char, 16384> sink;
  for (size_t drained = 0; drained < (1 << 20) && wait_for(sock, POLLIN, linger, nullptr) == Wait::kReady;) {
    const ssize_t n = ::recv(sock, sink.data(), sink.size(), 0);
    if (n <= 0) return;
    drained += static_cast<size_t>(n);
  }
}

// One connection's reads and writes for httplib's process_request, with the deadlines of the
// request being read: its line and headers from its first byte, its body from the end of its
// headers. A read past one answers 408 and fails, and so does every read and write after it.
// Reads are buffered, as httplib's own socket stream does: it reads a request's head a byte at a
// time.
class RequestStream final : public httplib::Stream {
 public:
  // `peer` and `peer_port`: the client's address, read once for the connection (httplib asks for
  // it with every request).
  RequestStream(int sock, std::string peer, int peer_port, const std::atomic<socket_t>& listening,
                const ConnectionLimits& limits, Clock::duration read_timeout, Clock::duration write_timeout)
      : sock_(sock),
        peer_(std::move(peer)),
        peer_port_(peer_port),
        listening_(listening),
        limits_(limits),
        read_timeout_(read_timeout),
        write_timeout_(write_timeout) {}

  // Waits up to `keep_alive` for the next request's first byte (false: none came, the client
  // left, or the server is stopping), and starts its header deadline.
  bool next_request(Clock::duration keep_alive) {
    if (closed_) return false;
    if (begin_ == end_ && wait_for(sock_, POLLIN, Clock::now() + keep_alive, &listening_) != Wait::kReady) return false;
    in_head_ = true;
    last_four_ = 0;
    request_refused = false;
    deadline_ = Clock::now() + seconds(limits_.header_timeout_s);
    return true;
  }

  // 408 when the request read last was refused (refuse_late), else 0.
  int refused_status() const { return request_refused ? 408 : 0; }

  bool is_readable() const override {
    if (closed_) return false;
    return begin_ < end_ || wait_for(sock_, POLLIN, read_until(), &listening_) == Wait::kReady;
  }

  bool is_writable() const override {
    return !closed_ && wait_for(sock_, POLLOUT, Clock::now() + write_timeout_, nullptr) == Wait::kReady && peer_open();
  }

  ssize_t read(char* ptr, size_t size) override {
    if (closed_) return -1;
    if (begin_ == end_) {
      switch (wait_for(sock_, POLLIN, read_until(), &listening_)) {
        case Wait::kReady: break;
        case Wait::kTimedOut:
          if (Clock::now() >= deadline_) refuse_late();
          return -1;
        case Wait::kStopping:
        case Wait::kFailed: closed_ = true; return -1;
      }
      if (size >= buffer_.size()) return took(ptr, receive(ptr, size));
      const ssize_t n = receive(buffer_.data(), buffer_.size());
      if (n <= 0) return n;
      begin_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_.data() + begin_, n);
    begin_ += n;
    return took(ptr, static_cast<ssize_t>(n));
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { ip = peer_, port = peer_port_; }
  void get_local_ip_and_port(std::string& ip, int& port) const override { ip = socket_address(sock_, false, &port); }
  socket_t socket() const override { return sock_; }

 private:
  // A read waits for the time between two reads (httplib's read timeout), and never past the
  // request's deadline.
  Clock::time_point read_until() const { return std::min(Clock::now() + read_timeout_, deadline_); }

  ssize_t receive(char* into, size_t size) const {
    ssize_t n;
    do n = ::recv(sock_, into, size, 0);
    while (n < 0 && errno == EINTR);
    return n;
  }

  // Notes what httplib was given: the blank line that ends the head starts the body's deadline.
  ssize_t took(const char* data, ssize_t n) {
    for (ssize_t i = 0; in_head_ && i < n; ++i) {
      last_four_ = (last_four_ << 8) | static_cast<unsigned char>(data[i]);
      if (last_four_ == 0x0d0a0d0a) {  // "\r\n\r\n"
        in_head_ = false;
        deadline_ = Clock::now() + seconds(limits_.body_timeout_s);
      }
    }
    return n;
  }

  // Whether the client has not closed its end: nothing to read, or something other than the end.
  bool peer_open() const {
    pollfd p{sock_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return true;
    char byte;
    return ::recv(sock_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
  }

  void refuse_late() {
    const std::string what = in_head_ ? "the request's line and headers did not arrive within " +
                                            std::to_string(static_cast<long long>(limits_.header_timeout_s)) +
                                            " s of its first byte (--header-timeout)"
                                      : "the request's body did not arrive within " +
                                            std::to_string(static_cast<long long>(limits_.body_timeout_s)) +
                                            " s of its headers (--body-timeout)";
    refuse(sock_, ApiError(408, "invalid_request_error", "", what, "request_timeout"), "Request Timeout");
    request_refused = true;
    closed_ = true;
  }

  const int sock_;
  const std::string peer_;
  const int peer_port_;
  const std::atomic<socket_t>& listening_;
  const ConnectionLimits& limits_;
  const Clock::duration read_timeout_, write_timeout_;
  std::array<char, 4096> buffer_;
  size_t begin_ = 0, end_ = 0;  // what buffer_ holds that httplib has not read yet
  bool in_head_ = true;
  uint32_t last_four_ = 0;      // the last four bytes of the head read so far
  Clock::time_point deadline_ = Clock::time_point::max();
  bool closed_ = false;         // answered 408, or the server stopped: no more reads or writes
};

}  // namespace

GuardedHttpServer& GuardedHttpServer::set_logger(httplib::Logger logger) {
  httplib::Server::set_logger([logger = std::move(logger)](const httplib::Request& req, const httplib::Response& res) {
    if (!request_refused) logger(req, res);
  });
  return *this;
}

int GuardedHttpServer::connections_from(const std::string& address) const {
  std::lock_guard lock(mutex_);
  auto it = open_.find(address);
  return it == open_.end() ? 0 : it->second;
}

bool GuardedHttpServer::admit(const std::string& address) {
  std::lock_guard lock(mutex_);
  int& open = open_[address];
  if (limits_.max_per_client > 0 && open >= limits_.max_per_client) {
    if (open == 0) open_.erase(address);
    return false;
  }
  ++open;
  return true;
}

void GuardedHttpServer::release(const std::string& address) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(address);
  if (it != open_.end() && --it->second == 0) open_.erase(it);
}

// httplib's own loop (process_server_socket in httplib.cc) with RequestStream for its socket
// stream: up to keep_alive_max_count_ requests, each awaited for keep_alive_timeout_sec_.
bool GuardedHttpServer::process_and_close_socket(socket_t sock) {
  int client_port = 0;
  const std::string client = socket_address(sock, true, &client_port);
  bool ok = false;
  if (!admit(client)) {
    refuse(sock,
           ApiError(429, "rate_limit_error", "",
                    "too many connections from " + client + ": at most " + std::to_string(limits_.max_per_client) +
                        " at once (--max-client-connections)",
                    "too_many_connections"),
           "Too Many Requests");
    if (log_refusal_) log_refusal_(429);
  } else {
    struct Release {
      GuardedHttpServer& server;
      const std::string& client;
      ~Release() { server.release(client); }
    } release{*this, client};
    RequestStream stream(sock, client, client_port, svr_sock_, limits_,
                         std::chrono::seconds(read_timeout_sec_) + std::chrono::microseconds(read_timeout_usec_),
                         std::chrono::seconds(write_timeout_sec_) + std::chrono::microseconds(write_timeout_usec_));
    for (size_t left = keep_alive_max_count_; left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
      if (!stream.next_request(std::chrono::seconds(keep_alive_timeout_sec_))) break;
      bool connection_closed = false;
      ok = process_request(stream, left == 1, connection_closed, nullptr);
      if (stream.refused_status() && log_refusal_) log_refusal_(stream.refused_status());
      if (!ok || connection_closed) break;
    }
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace potop::serve
