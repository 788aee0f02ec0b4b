// The HTTP server under `potop serve`: cpp-httplib's parsing and routing, with the connection
// handling it lacks for a server exposed to clients it does not trust (docs/serve.md, "Exposing
// the server"):
//   - a deadline for a request's line and headers, from its first byte, and another for its body
//     once the headers are in: a client trickling a byte every few seconds gets 408 and is
//     dropped, where httplib 0.11 bounds only the time between two reads and would wait forever;
//   - a cap on the connections open at once from one client address: more get 429 at once,
//     before a byte of theirs is read, so that one client cannot take every connection thread;
//   - on stop(), connections waiting for a request, or still sending one, are dropped at once;
//     requests already read are answered.
//
// How: httplib hands each accepted socket to its private virtual process_and_close_socket. This
// class overrides it with its own keep-alive loop over a socket stream of its own (the deadlines
// live in the stream's reads) and lets httplib's protected process_request parse, route and
// answer each request, as its own loop does. Everything else (routes, handlers, streaming,
// timeouts between reads, the listening socket) is httplib's, unchanged.
#pragma once
#include <httplib.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace potop::serve {

struct ConnectionLimits {
  double header_timeout_s = 10;  // a request's line and headers, from its first byte (408 beyond)
  double body_timeout_s = 30;    // its body, from the end of its headers (408 beyond)
  int max_per_client = 64;       // connections open at once from one address (429 beyond); 0: no cap
};

class GuardedHttpServer : public httplib::Server {
 public:
  explicit GuardedHttpServer(const ConnectionLimits& limits) : limits_(limits) {}

  // httplib's logger, for the requests httplib answers; a request refused with 408 while it was
  // read is not among them (httplib would log it as its own 400, which it never sent).
  GuardedHttpServer& set_logger(httplib::Logger logger);
  // Called with 408 or 429 for every connection this class answers itself.
  void set_refusal_logger(std::function<void(int status)> log) { log_refusal_ = std::move(log); }

  // Connections open now from `address` (tests and /metrics).
  int connections_from(const std::string& address) const;

 private:
  bool process_and_close_socket(socket_t sock) override;
  // Counts a connection from `address`; false (and nothing counted) when it would pass the cap.
  bool admit(const std::string& address);
  void release(const std::string& address);

  const ConnectionLimits limits_;
  std::function<void(int)> log_refusal_;
  mutable std::mutex mutex_;
  std::map<std::string, int> open_;  // connections open per client address
};

}  // namespace potop::serve
