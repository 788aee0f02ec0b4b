// `potop serve`: the HTTP server for one model of a kind it can serve (endpoints.h). Routes:
//   POST /v1/completions   a GPT: completion_request.h (JSON, or server-sent events with "stream");
//                          a translation model: the prompt's translation
//   POST /v1/chat/completions  a GPT: chat_request.h, the same generation in the chat shape; a
//                          translation model: the last user message's translation
//   POST /v1/responses     the same as a chat, in OpenAI's Responses API (chat_request.h)
//   POST /v1/fill-mask     a BERT: the top-k tokens for each [MASK] of a text
//   POST /v1/embeddings    a BERT: one unit vector per text (OpenAI's shape)
//   POST /v1/classify      a classifier: a label and the class probabilities per text
//   GET|POST /v1/attention every kind served: tokens and layers × heads × T × T weights (a
//                          translation model: its cross-attention, target rows × source keys)
//   GET  /v1/models        the one model served (and its aliases); GET /v1/models/{id}: one
//   GET  /health           {"status": "ok"}
//   GET  /metrics          Prometheus text (metrics.h)
//   GET  /                 the web studio (web/, compiled in: web_assets.h)
// An endpoint the model's kind cannot answer is a 400 naming the kind; a request whose "model"
// names neither the model nor an alias is 404 model_not_found; an endpoint asked with another
// method than its own is 405. Every client mistake is a 4xx with {"error": {"message", "type",
// "param", "code"}}; a full queue is 503 with Retry-After. docs/serve.md documents it all.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include <optional>
#include <vector>

#include "checkpoint/model_dir.h"
#include "serve/chat_request.h"
#include "serve/guarded_http_server.h"
#include "serve/limits.h"
#include "serve/request_guard.h"

namespace potop::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;           // 0: any free port (on_ready says which)
  int slots = 16;            // generations decoded together in one batch (serve/batcher.h)
  int queue = 16;            // requests that may wait for a slot; more get 503
  int threads = 1;           // OpenMP threads of the batcher
  int prefill_chunk = 64;    // most prompt tokens read in one forward pass between decoding steps
  Limits limits;
  // --chat-template: overrides the model's (and the plain default).
  std::optional<ChatTemplate> chat_template;
  // A prompt's characters the tokenizer lacks: refused (400), left out, or replaced (--unknown).
  Unknown unknown = Unknown::kError;
  // Other names a request's "model" may give (the model directory's name always serves).
  std::vector<std::string> aliases;
  // Connections open at once, in all (serve/guarded_http_server.h: past it a new one takes the
  // place of the oldest idle one).
  int max_connections = 1024;
  // Deadlines for reading a request, and the connections one client address may hold.
  ConnectionLimits connections;
  // API key, CORS origins, Host names (request_guard.h); `loopback` is set from `host` by run().
  GuardOptions guard;
};

// The kinds served: a GPT, a BERT, a classifier and a translation model.
bool servable(const ModelKind& kind);

class Server {
 public:
  // `model` is of a kind servable() accepts.
  Server(LoadedModel&& model, const ServeOptions& options);
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
