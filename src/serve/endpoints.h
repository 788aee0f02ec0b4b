// What a served model answers, one set of endpoints per task it has (nn/tasks.h), never per
// kind: a causal LM completes text (causal_lm_endpoints.cpp); a sequence-to-sequence model
// translates (seq2seq_endpoints.cpp); a masked LM fills in [MASK], a text encoder embeds texts, a
// sequence classifier labels them (encoder_endpoints.cpp); self-attention is /v1/attention. The
// server (server.cpp) adds what every model has (/health, /metrics, /v1/models, the studio) and
// answers an endpoint the model lacks with a 400 naming its kind.
#pragma once
#include <httplib.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <chrono>

#include "checkpoint/model_dir.h"
#include "core/threads.h"
#include "serve/api_error.h"
#include "serve/http_json.h"
#include "serve/metrics.h"
#include "serve/server.h"
#include "serve/slot_pool.h"

namespace potop::serve {

// The name a model is served as (/v1/models' id): its directory's, or a lone weights file's stem.
inline std::string served_name(const std::filesystem::path& weights) {
  const std::string dir = weights.parent_path().filename().string();
  return dir.empty() ? weights.stem().string() : dir;
}

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

// Requests that run one at a time on a model, each a few forward passes (a BERT's, a
// classifier's, a translation model's; a GPT's batcher exists to interleave long generations,
// these have none): one slot of a SlotPool, so that at most --queue requests wait and more get the
// GPT's 503 (a fill-mask once waited 3.3 s behind 24 embeddings), the thread count, the gauges,
// and a client's mistake as its 4xx.
class OneAtATime {
 public:
  explicit OneAtATime(const ServeOptions& options) : threads_(options.threads), timeout_s_(options.limits.timeout_s), slot_(1, options.queue) {}
  // Runs work() alone; an ApiError it throws (or the full queue's 503) becomes the response.
  template <class Work>
  void run(httplib::Response& res, Work work) {
    try {
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s_));
      const auto lease = slot_.acquire(deadline);
      set_threads(threads_);
      work();
    } catch (const ApiError& e) {
      send_error(res, e);
    }
  }
  Load load() const { return {slot_.waiting(), slot_.busy(), 1}; }

 private:
  int threads_;
  double timeout_s_;
  SlotPool slot_;
};

// /v1/models' "meta" every model has: its kind, its Transformer's sizes (config.json's vocab_size,
// block_size, n_layer, n_head, n_embd), tokenizer, parameters and checkpoint.
nlohmann::json model_meta(const LoadedModel& model);

// The endpoints of a model's tasks (servable(*model.kind)): a causal LM's, a sequence-to-sequence
// model's, or an encoder's (masked LM, text encoder, sequence classifier).
std::unique_ptr<Endpoints> endpoints_for(LoadedModel&& model, const ServeOptions& options, Metrics& metrics);
std::unique_ptr<Endpoints> causal_lm_endpoints(LoadedModel&& model, const ServeOptions& options, Metrics& metrics);
std::unique_ptr<Endpoints> seq2seq_endpoints(LoadedModel&& model, const ServeOptions& options);
std::unique_ptr<Endpoints> encoder_endpoints(LoadedModel&& model, const ServeOptions& options);

}  // namespace potop::serve
