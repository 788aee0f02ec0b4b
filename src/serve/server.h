// `potop serve`: the HTTP server. Routes:
//   POST /v1/completions   completion_request.h (JSON, or server-sent events with "stream")
//   GET  /v1/models        the one model served
//   GET|POST /v1/attention attention weights of a text: tokens and layers × heads × T × T
//   GET  /health           {"status": "ok"}
//   GET  /metrics          Prometheus text (metrics.h)
//   GET  /                 the web studio (web/, compiled in: web_assets.h)
// Every client mistake is a 4xx with {"error": {"message", "type", "param"}}; a full queue is
// 503 with Retry-After. docs/serve.md documents it all.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "checkpoint/model_dir.h"
#include "serve/limits.h"

namespace potop::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;           // 0: any free port (on_ready says which)
  int slots = 16;            // generations decoded together in one batch (serve/batcher.h)
  int queue = 16;            // requests that may wait for a slot; more get 503
  int threads = 1;           // OpenMP threads of the batcher
  int prefill_chunk = 64;    // most prompt tokens read in one forward pass between decoding steps
  Limits limits;
};

class Server {
 public:
  Server(LoadedGpt& model, const ServeOptions& options);
  ~Server();
  // Binds host:port and serves until stop(); on_ready(port) is called once listening. Throws
  // potop::Error when the address cannot be bound.
  void run(const std::function<void(int port)>& on_ready);
  void stop();  // safe from another thread (not from a signal handler)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace potop::serve
