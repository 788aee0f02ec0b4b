// What a served model answers, one implementation per kind of model: a GPT completes text
// (gpt_endpoints.cpp); a BERT fills in [MASK] and embeds texts, a classifier labels them
// (encoder_endpoints.cpp). The server (server.cpp) adds what every model has (/health, /metrics,
// /v1/models, the studio) and answers an endpoint the kind lacks with a 400 naming the kind.
#pragma once
#include <httplib.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/model_dir.h"
#include "serve/metrics.h"
#include "serve/server.h"

namespace potop::serve {

using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
struct Route {
  std::string method;  // "GET" or "POST"
  std::string path;    // "/v1/completions"
  Handler handler;
};

// The gauges of /health and /metrics: requests waiting, being answered, and answered at once.
struct Load {
  int waiting = 0, busy = 0, slots = 0;
};

class Endpoints {
 public:
  virtual ~Endpoints() = default;
  // /v1/models' "meta" for the model: its kind, shape and tokenizer ("views": the studio's tabs).
  virtual nlohmann::json meta() const = 0;
  virtual std::vector<Route> routes() = 0;
  virtual Load load() const = 0;
};

std::unique_ptr<Endpoints> gpt_endpoints(LoadedModel&& model, const ServeOptions& options, Metrics& metrics);
// A BERT or a classifier.
std::unique_ptr<Endpoints> encoder_endpoints(LoadedModel&& model, const ServeOptions& options);

}  // namespace potop::serve
