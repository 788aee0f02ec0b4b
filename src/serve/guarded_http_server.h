// The HTTP server under `potop serve`: cpp-httplib parses, routes and answers each request; the
// connections are ours, handled the way nginx handles them, for clients the server does not trust
// (docs/serve.md, "Exposing the server"):
//   - One event loop (epoll) holds every open connection and reads every request whole — its line
//     and headers (at most 16 KiB: 431 beyond), then exactly Content-Length bytes of body
//     (serve/request_frame.h) — before a thread sees it. An idle or trickling connection costs a
//     socket and the bytes it sent, never a thread: hundreds of slow clients cannot stall the
//     others.
//   - A handler gets those bytes and nothing more, so a refusal (401, 403, 415) that leaves the
//     body unread can never have it parsed as the next request (no request smuggling), and a
//     refusal of the framing itself (400, 411, 413, 431) closes the connection.
//   - Deadlines: a request's line and headers from its first byte, its body from the end of its
//     headers (408 beyond), the next request of a kept-alive connection (closed beyond).
//   - Caps: connections open from one client address, and in all. A new connection past a cap
//     takes the place of the oldest one that is idle or still sending its request (that one is
//     closed, as a keep-alive connection may be at any time), so a client holding many
//     connections can never lock the others out; only when every connection is busy with a
//     request is the new one refused (429 for one address, 503 in all).
//   - The bytes held for requests being read are capped in all (--max-connections × a request is
//     far more than RSS can take): past the cap a request's connection gets 503.
//   - The port is bound without SO_REUSEPORT: a second server on a port in use is refused, not
//     handed half the connections.
//   - stop(): connections idle or still sending a request are closed at once; requests already
//     read are answered (a stream of tokens ends, as httplib ends it when its server stops).
#pragma once
#include <httplib.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "serve/request_frame.h"

namespace potop::serve {

struct ConnectionLimits {
  double header_timeout_s = 10;  // a request's line and headers, from its first byte (408 beyond)
  double body_timeout_s = 30;    // its body, from the end of its headers (408 beyond)
  int max_per_client = 64;       // connections open at once from one address; 0: no cap
  int max_connections = 1024;    // connections open at once in all
  size_t max_head_bytes = 16 << 10;     // a request's line and headers (431 beyond)
  size_t max_buffered_bytes = 64 << 20; // bytes of requests being read, all connections together
};

// Bytes a request's handler allocated and freed (a chat template's rendering, a JSON answer): the
// loop adds them to its own frees and hands memory back to the system (malloc_trim) once they pass
// 4 MiB, at most once a second. Safe from any thread.
void note_memory_freed(size_t bytes);

class GuardedHttpServer : public httplib::Server {
 public:
  // `request_threads`: requests handled at once, each on a thread that exits when no request
  // waits (serve/connection_threads.h); more wait for one. The bodies' cap is
  // set_payload_max_length's.
  GuardedHttpServer(const ConnectionLimits& limits, size_t request_threads);
  ~GuardedHttpServer() override;

  // Binds host:port (port 0: any free one) and returns the port. Throws potop::Error naming the
  // port when it is in use, or the host when it is not an address of this machine.
  int bind_port(const std::string& host, int port);
  // Serves until stop(), then returns once every request already read has been answered.
  void serve();
  // Safe from any thread (not from a signal handler). Hides httplib's.
  void stop();

  // Called with the status of every request this class answers itself, before any handler
  // (400, 408, 411, 413, 429, 431, 503).
  void set_refusal_logger(std::function<void(int status)> log) { log_refusal_ = std::move(log); }

  // Connections open now from `address`, and in all (tests and /metrics).
  int connections_from(const std::string& address) const;
  int connections_open() const;

 private:
  class Loop;
  // Runs on a request thread: `request` is one whole request; answers it on `sock`. Returns
  // whether the connection may carry another request.
  bool answer(int sock, const std::string& peer, int peer_port, const std::string& request, bool last);

  const ConnectionLimits limits_;
  std::function<void(int)> log_refusal_;
  std::unique_ptr<Loop> loop_;
};

}  // namespace potop::serve
