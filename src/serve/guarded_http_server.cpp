#include "serve/guarded_http_server.h"

#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "serve/api_error.h"
#include "serve/connection_threads.h"
#include "serve/http_json.h"

namespace potop::serve {

namespace {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// "10", "0.5": a deadline as the flag that sets it would be written.
std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
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

// Whether `sock` is ready for `events` within `until` (a hang-up or an error counts: the call
// that follows says which).
bool ready(int sock, short events, Clock::time_point until) {
  for (;;) {
    const auto left = std::max(until - Clock::now(), Clock::duration::zero());
    pollfd p{sock, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::ceil(std::chrono::duration<double, std::milli>(left).count())));
    if (rc > 0) return true;
    if (rc == 0 || errno != EINTR) return false;
  }
}

// One request's reads and writes for httplib's process_request: the request from memory (read
// whole by the event loop: nothing past it can be read), the answer to the socket.
class AnswerStream final : public httplib::Stream {
 public:
  AnswerStream(int sock, const std::string& request, const std::string& peer, int peer_port,
               Clock::duration write_timeout)
      : sock_(sock), request_(request), peer_(peer), peer_port_(peer_port), write_timeout_(write_timeout) {}

  bool is_readable() const override { return at_ < request_.size(); }

  // False once the client has left, so that a generation streaming to it stops.
  bool is_writable() const override { return ready(sock_, POLLOUT, Clock::now() + write_timeout_) && peer_open(); }

  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, request_.size() - at_);
    std::memcpy(ptr, request_.data() + at_, n);
    at_ += n;
    return static_cast<ssize_t>(n);
  }

  // The socket is non-blocking (the event loop's): wait for room, within the write timeout.
  ssize_t write(const char* ptr, size_t size) override {
    const Clock::time_point until = Clock::now() + write_timeout_;
    for (;;) {
      const ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if ((errno != EAGAIN && errno != EWOULDBLOCK) || !ready(sock_, POLLOUT, until)) return -1;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { ip = peer_, port = peer_port_; }
  void get_local_ip_and_port(std::string& ip, int& port) const override { ip = socket_address(sock_, false, &port); }
  socket_t socket() const override { return sock_; }

 private:
  // Whether the client has not closed its end: nothing to read, or something other than the end.
  bool peer_open() const {
    char byte;
    const ssize_t n = ::recv(sock_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  }

  const int sock_;
  const std::string& request_;
  const std::string& peer_;
  const int peer_port_;
  const Clock::duration write_timeout_;
  size_t at_ = 0;
};

}  // namespace

// The event loop: every connection from accept to close, and the hand-over of whole requests to
// the request threads. Everything here runs on the thread of serve(), except stop() and the
// counters' readers.
class GuardedHttpServer::Loop {
 public:
  Loop(GuardedHttpServer& server, size_t request_threads)
      : server_(server), limits_(server.limits_), threads_(request_threads) {
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_ < 0 || wake_ < 0) throw Error("serve: cannot create an event loop: " + std::string(std::strerror(errno)));
    watch(wake_);
  }
  ~Loop() {
    if (listening_ >= 0) ::close(listening_);
    for (auto& [fd, c] : connections_) ::close(fd);
    ::close(wake_);
    ::close(epoll_);
  }

  int bind_port(const std::string& host, int port);
  void run();
  void stop() {
    stopping_ = true;
    wake();
  }

  int connections_from(const std::string& address) const {
    std::lock_guard lock(counts_mutex_);
    auto it = per_peer_.find(address);
    return it == per_peer_.end() ? 0 : it->second;
  }
  int connections_open() const {
    std::lock_guard lock(counts_mutex_);
    return open_;
  }

 private:
  enum class State {
    kWaiting,  // for the next request (keep-alive) or the first
    kHead,     // reading a request's line and headers
    kBody,     // reading its body
    kBusy,     // a request thread is answering it: not watched
    kClosing,  // refused: what the client still sends is read and dropped for a moment, then closed
  };
  struct Connection {
    int fd = -1;
    std::string peer;
    int peer_port = 0;
    State state = State::kWaiting;
    std::string in;               // bytes read that no request thread has taken
    size_t head_bytes = 0, need = 0;  // kBody: the request's head, and head and body
    bool expect_continue = false;
    uint64_t since = 0;           // when it began to wait as it does now, as a turn (the oldest goes first)
    Clock::time_point deadline;
    size_t requests = 0;          // handed over so far
    size_t drained = 0;           // kClosing: bytes dropped
  };
  struct Answered {
    int fd;
    bool keep;
  };

  void watch(int fd) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &e);
  }
  void unwatch(int fd) { ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr); }
  // Counts bytes a connection's `in` gains or loses, in all and for its address.
  void hold(const Connection& c, size_t n) {
    buffered_ += n;
    buffered_by_peer_[c.peer] += n;
  }
  void release(const Connection& c, size_t n) {
    if (n == 0) return;
    buffered_ -= n;
    auto it = buffered_by_peer_.find(c.peer);
    if ((it->second -= n) == 0) buffered_by_peer_.erase(it);
  }
  void wake() {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_, &one, sizeof one);
  }

  void accept_all(Clock::time_point now);
  bool make_room(const std::string& peer);
  void on_readable(Connection& c, Clock::time_point now);
  void advance(Connection& c, Clock::time_point now);
  void hand_over(Connection& c);
  void take_answered(Clock::time_point now);
  void refuse(Connection& c, int status, const std::string& code, const std::string& message, Clock::time_point now);
  void expire(Clock::time_point now);
  void close(int fd);
  void shut_down();
  void return_memory(Clock::time_point now);

  GuardedHttpServer& server_;
  const ConnectionLimits& limits_;
  ConnectionThreads threads_;
  int epoll_ = -1, wake_ = -1, listening_ = -1;
  int max_connections_ = 0;  // limits_.max_connections, within the process's file limit
  std::atomic<bool> stopping_{false};
  bool shut_ = false;
  Clock::time_point accept_paused_until_{};
  std::unordered_map<int, Connection> connections_;
  size_t buffered_ = 0;  // bytes of every connection's `in`
  // Those of each address: one address may hold a quarter of the pool (but always one whole
  // request), so that one client sending many large bodies slowly cannot refuse every other.
  std::unordered_map<std::string, size_t> buffered_by_peer_;
  size_t busy_ = 0;
  uint64_t turn_ = 0;  // counts the connections' changes of state: their order
  size_t freed_since_trim_ = 0;
  Clock::time_point last_trim_{}, last_expire_{};
  // The last request answered since the last trim (none: the epoch): what a handler's thread frees
  // in its own arena is not all counted, so a flood's end is trimmed once it has settled.
  Clock::time_point answered_since_trim_{};
  std::array<char, 64 << 10> scratch_;

  mutable std::mutex counts_mutex_;  // per_peer_ and open_, which other threads read
  std::map<std::string, int> per_peer_;
  int open_ = 0;

  std::mutex answered_mutex_;  // answered_: the request threads add, the loop takes
  std::vector<Answered> answered_;
};

int GuardedHttpServer::Loop::bind_port(const std::string& host, int port) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  const std::string service = std::to_string(port);
  const std::string where = "--host " + host + " --port " + service + ": cannot listen on " + host + ":" + service;
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    throw Error(where + " (" + ::gai_strerror(rc) + ")");
  bool in_use = false;
  for (addrinfo* a = found; a && listening_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    // SO_REUSEADDR lets a restarted server take its port back from connections still in
    // TIME_WAIT; SO_REUSEPORT (httplib's default) would let a second server share the port.
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    // Debian's httplib listens with a backlog of 5: 16 clients connecting at once overflowed it.
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 256) == 0) {
      listening_ = fd;
    } else {
      in_use = in_use || errno == EADDRINUSE;
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (listening_ < 0 && in_use)
    throw Error("--port " + service + ": port " + service + " is in use on " + host +
                " (another server listens there; stop it or choose another --port)");
  if (listening_ < 0) throw Error(where + " (not an address of this machine)");
  watch(listening_);
  // httplib's streams stop once this is invalid (its sign of a server stopping): valid while we
  // listen, made invalid by shut_down().
  server_.svr_sock_ = listening_;
  int bound = port;
  socket_address(listening_, false, &bound);
  // Every connection holds a descriptor: ask for as many as the cap needs, and stay within them.
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  const rlim_t want = static_cast<rlim_t>(limits_.max_connections) + 256;
  if (files.rlim_cur < want) {
    files.rlim_cur = std::min(want, files.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  max_connections_ = static_cast<int>(std::min<rlim_t>(limits_.max_connections, std::max<rlim_t>(files.rlim_cur, 320) - 256));
  return bound;
}

void GuardedHttpServer::Loop::run() {
  std::array<epoll_event, 256> events;
  while (!(shut_ && busy_ == 0)) {
    const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 50);
    const Clock::time_point now = Clock::now();
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listening_) {
        accept_all(now);
      } else if (fd == wake_) {
        uint64_t count;
        [[maybe_unused]] const ssize_t r = ::read(wake_, &count, sizeof count);
        take_answered(now);
      } else if (auto it = connections_.find(fd); it != connections_.end()) {
        on_readable(it->second, now);
      }
    }
    if (stopping_ && !shut_) shut_down();
    if (now - last_expire_ >= std::chrono::milliseconds(50)) expire(now);
    return_memory(now);
  }
  threads_.shutdown();
}

void GuardedHttpServer::Loop::accept_all(Clock::time_point now) {
  for (;;) {
    const int fd = ::accept4(listening_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {  // out of descriptors: try again in a moment, never spin
        unwatch(listening_);
        accept_paused_until_ = now + std::chrono::milliseconds(100);
      }
      return;
    }
    // A stream is one small write per token: Nagle's algorithm would hold each back until the
    // client acknowledged the one before.
    const int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    Connection c;
    c.fd = fd;
    c.peer = socket_address(fd, true, &c.peer_port);
    c.since = ++turn_;
    c.deadline = now + std::chrono::seconds(server_.keep_alive_timeout_sec_);
    const bool room = make_room(c.peer);
    {
      std::lock_guard lock(counts_mutex_);
      ++per_peer_[c.peer];
      ++open_;
    }
    Connection& added = connections_.emplace(fd, std::move(c)).first->second;
    watch(fd);
    if (room) continue;
    const bool one_client = limits_.max_per_client > 0 && connections_from(added.peer) > limits_.max_per_client;
    if (one_client)
      refuse(added, 429, "too_many_connections",
             "too many connections from " + added.peer + ": at most " + std::to_string(limits_.max_per_client) +
                 " at once, each busy with a request (--max-client-connections)",
             now);
    else
      refuse(added, 503, "too_many_connections",
             "the server has " + std::to_string(max_connections_) +
                 " connections open, each busy with a request (--max-connections); try again shortly",
             now);
  }
}

// Before a new connection from `peer` is counted: when it would pass a cap, closes the oldest
// connection (of that peer, or of all) that is not busy with a request. False when every one is.
bool GuardedHttpServer::Loop::make_room(const std::string& peer) {
  auto oldest_idle = [&](bool same_peer) {
    Connection* pick = nullptr;
    for (auto& [fd, c] : connections_)
      if (c.state != State::kBusy && (!same_peer || c.peer == peer) && (!pick || c.since < pick->since)) pick = &c;
    return pick;
  };
  if (limits_.max_per_client > 0 && connections_from(peer) >= limits_.max_per_client) {
    Connection* idle = oldest_idle(true);
    if (!idle) return false;
    close(idle->fd);
  }
  if (static_cast<int>(connections_.size()) >= max_connections_) {
    Connection* idle = oldest_idle(false);
    if (!idle) return false;
    close(idle->fd);
  }
  return true;
}

void GuardedHttpServer::Loop::on_readable(Connection& c, Clock::time_point now) {
  if (c.state == State::kClosing) {
    const ssize_t n = ::recv(c.fd, scratch_.data(), scratch_.size(), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n > 0) c.drained += static_cast<size_t>(n);
    if (n <= 0 || c.drained > (1u << 20)) close(c.fd);
    return;
  }
  // Never more than the request being read and the head of the next (pipelined) one.
  const size_t cap = (c.state == State::kBody ? c.need : 0) + limits_.max_head_bytes;
  const size_t room = cap > c.in.size() ? cap - c.in.size() : 0;
  if (room == 0) return advance(c, now);
  const ssize_t n = ::recv(c.fd, scratch_.data(), std::min(room, scratch_.size()), 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) return close(c.fd);  // the client left, or its socket failed
  if (buffered_ + static_cast<size_t>(n) > limits_.max_buffered_bytes)
    return refuse(c, 503, "server_busy",
                  "the server holds as many requests being sent as it can (" +
                      std::to_string(limits_.max_buffered_bytes >> 20) + " MiB); try again shortly",
                  now);
  const size_t share = std::max(limits_.max_buffered_bytes / 4, limits_.max_head_bytes + server_.payload_max_length_);
  const auto by_peer = buffered_by_peer_.find(c.peer);
  if ((by_peer == buffered_by_peer_.end() ? 0 : by_peer->second) + static_cast<size_t>(n) > share)
    return refuse(c, 503, "server_busy",
                  "the requests " + c.peer + " is sending hold its share of the server's memory for them (" +
                      std::to_string(share >> 20) + " MiB); try again once they are sent",
                  now);
  if (c.state == State::kWaiting && leading_blank_lines(std::string_view(scratch_.data(), n)) < static_cast<size_t>(n)) {
    c.state = State::kHead;  // its first byte: the header deadline starts
    c.since = ++turn_;
    c.deadline = now + seconds(limits_.header_timeout_s);
  }
  c.in.append(scratch_.data(), static_cast<size_t>(n));
  hold(c, static_cast<size_t>(n));
  advance(c, now);
}

// Frames what `c` holds: refuses it, waits for more, or hands a whole request over.
void GuardedHttpServer::Loop::advance(Connection& c, Clock::time_point now) {
  if (c.state == State::kWaiting || c.state == State::kHead) {
    const size_t blank = leading_blank_lines(c.in);
    c.in.erase(0, blank);
    release(c, blank);
    if (c.in.empty()) return;
    if (c.state == State::kWaiting) {  // pipelined: the bytes were already here
      c.state = State::kHead;
      c.since = ++turn_;
      c.deadline = now + seconds(limits_.header_timeout_s);
    }
    const RequestFrame f = frame_request(c.in, FrameLimits{limits_.max_head_bytes, server_.payload_max_length_});
    if (f.state == RequestFrame::State::kIncomplete) return;
    if (f.state == RequestFrame::State::kRefused) return refuse(c, f.status, f.code, f.message, now);
    c.state = State::kBody;
    c.head_bytes = f.head_bytes;
    c.need = f.head_bytes + f.body_bytes;
    c.expect_continue = f.expect_continue;
    c.deadline = now + seconds(limits_.body_timeout_s);
    if (c.expect_continue && c.in.size() < c.need) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      [[maybe_unused]] const ssize_t n = ::send(c.fd, kContinue.data(), kContinue.size(), MSG_NOSIGNAL);
    }
  }
  if (c.state == State::kBody && c.in.size() >= c.need) hand_over(c);
}

void GuardedHttpServer::Loop::hand_over(Connection& c) {
  std::string request = c.expect_continue ? without_expect(std::string_view(c.in).substr(0, c.head_bytes)) +
                                                c.in.substr(c.head_bytes, c.need - c.head_bytes)
                                          : c.in.substr(0, c.need);
  c.in.erase(0, c.need);
  release(c, c.need);
  freed_since_trim_ += c.need;
  c.state = State::kBusy;
  unwatch(c.fd);
  ++busy_;
  const bool last = ++c.requests >= server_.keep_alive_max_count_ || stopping_;
  threads_.enqueue([this, fd = c.fd, peer = c.peer, port = c.peer_port, request = std::move(request), last] {
    const bool keep = server_.answer(fd, peer, port, request, last);
    {
      std::lock_guard lock(answered_mutex_);
      answered_.push_back({fd, keep});
    }
    wake();
  });
}

void GuardedHttpServer::Loop::take_answered(Clock::time_point now) {
  std::vector<Answered> done;
  {
    std::lock_guard lock(answered_mutex_);
    done.swap(answered_);
  }
  for (const Answered& a : done) {
    --busy_;
    answered_since_trim_ = now;
    auto it = connections_.find(a.fd);
    if (it == connections_.end()) continue;
    Connection& c = it->second;
    if (!a.keep || shut_) {
      close(a.fd);
      continue;
    }
    c.state = State::kWaiting;
    c.since = ++turn_;
    c.deadline = now + std::chrono::seconds(server_.keep_alive_timeout_sec_);
    watch(a.fd);
    advance(c, now);  // a pipelined request may be here already
  }
}

// Answers `status` and closes the sending side. The client may still be sending: closing outright
// would answer it with a reset, which can discard our answer before the client reads it, so what
// it sends is read and dropped for a moment first (kClosing).
void GuardedHttpServer::Loop::refuse(Connection& c, int status, const std::string& code, const std::string& message,
                                     Clock::time_point now) {
  const char* type = status == 429 ? "rate_limit_error" : status == 503 ? "server_error" : "invalid_request_error";
  const std::string body = dump(ApiError(status, type, "", message, code).body());
  std::string response = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\n";
  response += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  response += "Connection: close\r\n";
  if (status == 429 || status == 503) response += "Retry-After: 1\r\n";
  response += "\r\n" + body;
  // A fresh socket's send buffer takes far more than this: what does not fit is not waited for.
  [[maybe_unused]] const ssize_t n = ::send(c.fd, response.data(), response.size(), MSG_NOSIGNAL);
  ::shutdown(c.fd, SHUT_WR);
  release(c, c.in.size());
  freed_since_trim_ += c.in.capacity();
  std::string().swap(c.in);
  c.state = State::kClosing;
  c.since = ++turn_;
  c.deadline = now + std::chrono::milliseconds(250);
  if (server_.log_refusal_) server_.log_refusal_(status);
}

void GuardedHttpServer::Loop::expire(Clock::time_point now) {
  last_expire_ = now;
  if (listening_ >= 0 && accept_paused_until_ != Clock::time_point{} && now >= accept_paused_until_) {
    accept_paused_until_ = {};
    watch(listening_);
  }
  std::vector<int> idle;
  for (auto& [fd, c] : connections_) {
    if (c.state == State::kBusy || now < c.deadline) continue;
    if (c.state == State::kHead || c.state == State::kBody) {
      const bool head = c.state == State::kHead;
      refuse(c, 408, "request_timeout",
             head ? "the request's line and headers did not arrive within " + seconds_text(limits_.header_timeout_s) +
                        " s of its first byte (--header-timeout)"
                  : "the request's body did not arrive within " + seconds_text(limits_.body_timeout_s) +
                        " s of its headers (--body-timeout)",
             now);
    } else {
      idle.push_back(fd);  // a keep-alive wait that ran out, or a refusal's moment to drain
    }
  }
  for (int fd : idle) close(fd);
}

void GuardedHttpServer::Loop::close(int fd) {
  auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  Connection& c = it->second;
  if (c.state != State::kBusy) unwatch(fd);
  release(c, c.in.size());
  freed_since_trim_ += c.in.capacity();
  {
    std::lock_guard lock(counts_mutex_);
    if (--per_peer_[c.peer] == 0) per_peer_.erase(c.peer);
    --open_;
  }
  ::close(fd);
  connections_.erase(it);
}

// Stops accepting, closes every connection not busy with a request; the busy ones close when
// answered.
void GuardedHttpServer::Loop::shut_down() {
  shut_ = true;
  server_.svr_sock_ = INVALID_SOCKET;
  if (listening_ >= 0) {
    unwatch(listening_);
    ::close(listening_);
    listening_ = -1;
  }
  std::vector<int> idle;
  for (auto& [fd, c] : connections_)
    if (c.state != State::kBusy) idle.push_back(fd);
  for (int fd : idle) close(fd);
}

// After a flood, hands what its connections' buffers and requests freed back to the system:
// glibc keeps freed memory in its arenas, and RSS stayed at 88-153 MB after floods whose heap was
// 3 MB. At most once a second, and only when enough was freed for it to matter.
namespace {
std::atomic<size_t> freed_by_handlers{0};
}  // namespace

void note_memory_freed(size_t bytes) { freed_by_handlers += bytes; }

void GuardedHttpServer::Loop::return_memory(Clock::time_point now) {
  // 4 MiB freed, or (once no request runs: a flood's last) 256 KiB: what a flood leaves behind is
  // handed back within a second of its end, not only when the next flood frees more. And once no
  // request has run for a second after some did: a handler's thread frees in its own arena, not all
  // of it counted, and a flood's last frees came after the last trim (RSS stayed 20 MB up in 1 of
  // 3 runs of cli.serve_guard.attack without this).
  const size_t freed = freed_since_trim_ + freed_by_handlers.load();
  const bool settled = busy_ == 0 && answered_since_trim_ != Clock::time_point{} &&
                       now - answered_since_trim_ >= std::chrono::seconds(1);
  if ((!settled && freed < (busy_ == 0 ? (256u << 10) : (4u << 20))) || now - last_trim_ < std::chrono::seconds(1))
    return;
  ::malloc_trim(0);
  freed_since_trim_ = 0;
  freed_by_handlers = 0;
  last_trim_ = now;
  answered_since_trim_ = {};
}

GuardedHttpServer::GuardedHttpServer(const ConnectionLimits& limits, size_t request_threads)
    : limits_(limits), loop_(std::make_unique<Loop>(*this, request_threads)) {
  // Fixed thresholds for mapping large blocks on their own (a hostile template's texts of 8 MiB)
  // and for handing back an arena's free top on free: left to glibc, freeing a large block raises
  // the first to its size (up to 32 MiB) and the second to twice that, so the next large blocks
  // come from a thread's arena and up to 64 MiB of its free top stays, which malloc_trim does not
  // return either: RSS stayed 20 MB up after 1 in 3 attacks. 2 MiB: a top is trimmed now and then,
  // not on every free of a body.
  ::mallopt(M_MMAP_THRESHOLD, 4 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 2 << 20);
}

GuardedHttpServer::~GuardedHttpServer() = default;

int GuardedHttpServer::bind_port(const std::string& host, int port) { return loop_->bind_port(host, port); }
void GuardedHttpServer::serve() { loop_->run(); }
void GuardedHttpServer::stop() { loop_->stop(); }
int GuardedHttpServer::connections_from(const std::string& address) const { return loop_->connections_from(address); }
int GuardedHttpServer::connections_open() const { return loop_->connections_open(); }

bool GuardedHttpServer::answer(int sock, const std::string& peer, int peer_port, const std::string& request, bool last) {
  AnswerStream stream(sock, request, peer, peer_port,
                      std::chrono::seconds(write_timeout_sec_) + std::chrono::microseconds(write_timeout_usec_));
  bool closed = false;
  const bool ok = process_request(stream, last, closed, nullptr);
  return ok && !closed && !last;
}

}  // namespace potop::serve
