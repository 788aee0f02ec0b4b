#include "serve/server.h"

#include <httplib.h>
#include <malloc.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "serve/chat_request.h"
#include "serve/endpoints.h"
#include "serve/guarded_http_server.h"
#include "serve/http_json.h"
#include "serve/metrics.h"
#include "serve/request_guard.h"
#include "serve/web_assets.h"

namespace potop::serve {

namespace {

using nlohmann::json;

const char* mime_type(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

// The model API's endpoints, whichever kind answers them: a kind without one answers 400 naming
// itself, never 404 (the endpoint exists; this model cannot answer it).
const std::vector<std::pair<std::string, std::string>>& api_endpoints() {
  static const std::vector<std::pair<std::string, std::string>> all = {
      {"POST", "/v1/completions"}, {"POST", "/v1/chat/completions"}, {"POST", "/v1/responses"}, {"GET", "/v1/attention"},
      {"POST", "/v1/attention"},   {"POST", "/v1/fill-mask"},        {"POST", "/v1/classify"},
      {"POST", "/v1/embeddings"}};
  return all;
}

// Every path the server answers, with the methods it takes: another method is 405.
const std::vector<std::pair<std::string, std::string>>& allowed_methods() {
  static const std::vector<std::pair<std::string, std::string>> all = {
      {"/v1/completions", "POST"}, {"/v1/chat/completions", "POST"}, {"/v1/responses", "POST"}, {"/v1/attention", "GET, POST"},
      {"/v1/fill-mask", "POST"},   {"/v1/classify", "POST"},         {"/v1/embeddings", "POST"},
      {"/v1/models", "GET"},       {"/health", "GET"},               {"/metrics", "GET"}};
  return all;
}

// How /metrics names a request's path: the paths the server has, anything else "other", so that
// clients cannot grow the table of counters without bound.
std::string route_label(const std::string& path) {
  for (const auto& [known, methods] : allowed_methods())
    if (path == known) return path;
  if (path.starts_with("/v1/models/")) return "/v1/models/{id}";
  return "other";
}

}  // namespace

bool servable(const ModelKind& kind) {
  for (const Task t : {Task::kCausalLM, Task::kSeq2Seq, Task::kMaskedLM, Task::kTextEncoder, Task::kSequenceClassifier})
    if (kind.can(t)) return true;
  return false;
}

nlohmann::json model_meta(const LoadedModel& m) {
  json meta = {{"kind", m.kind->name}, {"tokenizer", m.tokenizer->kind()},
               {"parameters", m.model->parameters().count()}, {"checkpoint", m.weights.string()}};
  for (const char* size : {"vocab_size", "block_size", "n_layer", "n_head", "n_kv_head", "n_embd"})
    if (m.config.contains(size)) meta[size] = m.config[size];
  return meta;
}

std::unique_ptr<Endpoints> endpoints_for(LoadedModel&& m, const ServeOptions& o, Metrics& metrics) {
  if (task<CausalLM>(*m.model)) return causal_lm_endpoints(std::move(m), o, metrics);
  if (task<Seq2Seq>(*m.model)) return seq2seq_endpoints(std::move(m), o);
  return encoder_endpoints(std::move(m), o);
}

struct Server::Impl {
  // Requests answered at once, each on a thread that exits when none waits (a flat RSS:
  // serve/connection_threads.h): every slot and queued request (generations' and /v1/attention's
  // queue of its own), and enough beyond them that a refusal (503), /health or /metrics is answered
  // at once while they are all busy. Connections cost no thread: they are read by the event loop
  // (serve/guarded_http_server.h).
  static size_t request_threads(const ServeOptions& o) {
    return static_cast<size_t>(std::max(256, o.slots + 1 + 2 * o.queue + 64));
  }
  static ConnectionLimits connection_limits(const ServeOptions& o) {
    ConnectionLimits limits = o.connections;
    limits.max_connections = o.max_connections;
    return limits;
  }

  Impl(LoadedModel&& m, const ServeOptions& o)
      : options(o), http(connection_limits(o), request_threads(o)), created(std::time(nullptr)) {
    kind = m.kind;
    name = served_name(m.weights);
    endpoints = endpoints_for(std::move(m), o, metrics);
  }

  void routes();
  // The names a request may give: the model's, then its aliases.
  std::vector<std::string> model_ids() const {
    std::vector<std::string> ids{name};
    for (const std::string& a : options.aliases)
      if (a != name) ids.push_back(a);
    return ids;
  }
  json model_object(const std::string& id) const {
    return {{"id", id}, {"object", "model"}, {"created", created}, {"owned_by", "potop"}, {"meta", endpoints->meta()}};
  }
  // The "model" a JSON body names when it is not one of model_ids(); empty otherwise (none named,
  // or not JSON: the endpoint says what is wrong).
  std::string other_model(const httplib::Request& req) const {
    if (req.method != "POST" || req.body.find("\"model\"") == std::string::npos) return "";
    const json body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) return "";
    auto it = body.find("model");
    if (it == body.end() || !it->is_string() || it->get<std::string>().empty()) return "";
    const std::string wanted = it->get<std::string>();
    for (const std::string& id : model_ids())
      if (wanted == id) return "";
    return wanted;
  }
  ApiError model_not_found(const std::string& id) const {
    std::string known;
    for (const std::string& k : model_ids()) known += (known.empty() ? "'" : ", '") + k + "'";
    return ApiError(404, "invalid_request_error", "model",
                    "the model '" + id + "' does not exist: this server serves " + known +
                        " (potop serve --alias NAME adds a name)",
                    "model_not_found");
  }

  ServeOptions options;
  const ModelKind* kind = nullptr;
  Metrics metrics;
  std::unique_ptr<Endpoints> endpoints;
  GuardedHttpServer http;
  std::string name;
  std::time_t created;
};

void Server::Impl::routes() {
  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    const Load load = endpoints->load();
    send_json(res, {{"status", "ok"}, {"slots", load.slots}, {"slots_busy", load.busy}, {"queue_length", load.waiting}});
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    const Load load = endpoints->load();
    res.set_content(metrics.prometheus(load.waiting, load.busy, load.slots), "text/plain; version=0.0.4");
  });
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    json data = json::array();
    for (const std::string& id : model_ids()) data.push_back(model_object(id));
    send_json(res, {{"object", "list"}, {"data", data}});
  });
  http.Get(R"(/v1/models/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    for (const std::string& known : model_ids())
      if (id == known) return send_json(res, model_object(id));
    send_error(res, model_not_found(id));
  });
  const std::vector<Route> answered = endpoints->routes();
  std::string offered;
  for (const Route& r : answered) offered += (offered.empty() ? "" : ", ") + r.method + " " + r.path;
  for (const auto& [method, path] : api_endpoints()) {
    Handler handler;
    for (const Route& r : answered)
      if (r.method == method && r.path == path) handler = r.handler;
    if (!handler) {
      const std::string message = "the model is " + kind->noun + " (kind '" + kind->name + "'): it does not answer " +
                                  method + " " + path + "; it answers " + offered;
      handler = [message](const httplib::Request&, httplib::Response& res) {
        send_error(res, ApiError(400, "invalid_request_error", "model", message, "unsupported_endpoint"));
      };
    }
    // A request naming another model is refused before the endpoint reads it.
    auto checked = [this, handler](const httplib::Request& req, httplib::Response& res) {
      if (const std::string other = other_model(req); !other.empty()) return send_error(res, model_not_found(other));
      handler(req, res);
    };
    if (method == "GET") http.Get(path, checked);
    else http.Post(path, checked);
  }
  for (const auto& route : allowed_methods()) {
    const std::string path = route.first, methods = route.second;  // (a lambda cannot capture a binding in clang 14)
    auto refuse = [path, methods](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", methods);
      send_error(res, ApiError(405, "invalid_request_error", "", req.method + " " + path + " is not allowed: " + path +
                                                                    " takes " + methods, "method_not_allowed"));
    };
    if (methods.find("GET") == std::string::npos) http.Get(path, refuse);
    if (methods.find("POST") == std::string::npos) http.Post(path, refuse);
    http.Put(path, refuse), http.Patch(path, refuse), http.Delete(path, refuse);
  }
  http.Get(R"(/([A-Za-z0-9_.-]*))", [](const httplib::Request& req, httplib::Response& res) {
    std::string file = req.matches[1];
    if (file.empty()) file = "index.html";
    if (file == "favicon.ico") file = "favicon.svg";  // what a browser asks for when a page names no icon
    // The studio holds the API key a user types: no other site may frame it (clickjacking).
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Content-Security-Policy", "frame-ancestors 'none'");
    for (const WebAsset& a : web_assets())
      if (a.name == file) return res.set_content(std::string(a.data), mime_type(a.name));
    send_error(res, ApiError(404, "not_found", "", "no such page: /" + file));
  });

  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413)
      send_error(res, ApiError(413, "invalid_request_error", "", "the request body is too large", "request_too_large"));
    else if (res.status == 404 || res.status == 405)
      send_error(res, ApiError(404, "not_found", "", "no such endpoint: " + req.method + " " + req.path, "not_found"));
    else if (res.status >= 400)
      send_error(res, ApiError(res.status, "invalid_request_error", "", "bad request"));
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
    std::string what = "unknown";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    res.status = 500;
    res.set_content(dump({{"error", {{"message", "internal error: " + what}, {"type", "server_error"}, {"param", nullptr},
                                     {"code", nullptr}}}}),
                    "application/json");
  });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    metrics.request(route_label(req.path), res.status);
  });
  // A connection refused before its request was read (429), or while it was (408), has no path.
  http.set_refusal_logger([this](int status) { metrics.request("connection", status); });
}

Server::Server(LoadedModel&& model, const ServeOptions& options) {
  // Less for glibc to keep: by default every handler thread may get an arena of its own (up to 8
  // per core), each keeping what its requests freed. KV caches are left to glibc's dynamic mmap
  // threshold: after the first is freed they come from the arenas. Forcing them to be mapped and
  // unmapped (a fixed threshold) cost a quarter of the server's time at 16 clients in munmap's
  // TLB shootdowns and in page faults on fresh pages (docs/serve.md, Measured).
  mallopt(M_ARENA_MAX, 2);
  impl_ = std::make_unique<Impl>(std::move(model), options);
  Impl& s = *impl_;
  s.options.guard.loopback = is_loopback_host(options.host);
  s.http.set_pre_routing_handler([&s](const httplib::Request& req, httplib::Response& res) {
    set_request_client(req.remote_addr);  // this thread answers it: a chat's template turn is per client
    return guard_request(s.options.guard, req, res) ? httplib::Server::HandlerResponse::Handled
                                                     : httplib::Server::HandlerResponse::Unhandled;
  });
  s.http.set_payload_max_length(options.limits.max_body_bytes);
  s.http.set_keep_alive_timeout(5);
  s.routes();
}

Server::~Server() = default;

void Server::run(const std::function<void(int port)>& on_ready) {
  Impl& s = *impl_;
  const int port = s.http.bind_port(s.options.host, s.options.port);
  chat_render_budget().start();  // (a test's earlier server in this process may have stopped it)
  if (on_ready) on_ready(port);
  s.http.serve();
}

void Server::stop() {
  chat_render_budget().stop();  // a chat waiting for a template's turn, or rendering, ends now (503)
  impl_->http.stop();
}

}  // namespace potop::serve
