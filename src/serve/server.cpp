#include "serve/server.h"

#include <httplib.h>
#include <malloc.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <mutex>
#include <random>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/threads.h"
#include "serve/api_error.h"
#include "serve/batcher.h"
#include "serve/completion.h"
#include "serve/connection_threads.h"
#include "serve/metrics.h"
#include "serve/slot_pool.h"
#include "serve/web_assets.h"

namespace potop::serve {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Generated text may hold stray bytes (a byte token alone): they become U+FFFD, never an exception.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  if (e.status == 503) res.set_header("Retry-After", "1");
  res.set_content(dump(e.body()), "application/json");
}

// OpenAI's legacy logprobs object for a run of scored tokens.
json logprobs_json(const std::vector<TokenScore>& scores) {
  json tokens = json::array(), token_logprobs = json::array(), top = json::array(), offsets = json::array();
  for (const TokenScore& s : scores) {
    tokens.push_back(s.text);
    token_logprobs.push_back(s.logprob ? json(*s.logprob) : json());
    if (s.logprob) {
      json alternatives = json::object();
      for (const auto& [text, lp] : s.top) alternatives.emplace(text, lp);  // the likelier of equal texts wins
      top.push_back(alternatives);
    } else {
      top.push_back(nullptr);
    }
    offsets.push_back(s.text_offset);
  }
  return {{"tokens", tokens}, {"token_logprobs", token_logprobs}, {"top_logprobs", top}, {"text_offset", offsets}};
}

const char* mime_type(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

uint64_t random_seed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace

struct Server::Impl {
  Impl(LoadedGpt& m, const ServeOptions& o)
      : model(m),
        options(o),
        pool(o.slots, o.queue),
        batcher(*m.model, o.threads, o.prefill_chunk),
        attention_model(static_cast<GPT*>(m.model->replica().release())),
        created(std::time(nullptr)) {
    name = m.weights.parent_path().filename().string();
    if (name.empty()) name = m.weights.stem().string();
  }

  void routes();
  void completions(const httplib::Request& req, httplib::Response& res);
  void attention(const httplib::Request& req, httplib::Response& res);
  json completion_object(const std::string& id, const std::string& text, const json& logprobs,
                         const json& finish_reason) const {
    return {{"id", id}, {"object", "text_completion"}, {"created", std::time(nullptr)}, {"model", name},
            {"choices", json::array({{{"text", text}, {"index", 0}, {"logprobs", logprobs},
                                      {"finish_reason", finish_reason}}})}};
  }

  LoadedGpt& model;
  ServeOptions options;
  SlotPool pool;
  Batcher batcher;  // runs every generation, on the loaded model
  // /v1/attention runs a full forward pass of its own on a replica (shared weights), one at a time.
  std::unique_ptr<GPT> attention_model;
  std::mutex attention_mutex;
  Metrics metrics;
  httplib::Server http;
  int listening_socket = -1;  // the socket bound to host:port (run())
  std::string name;
  std::time_t created;
  std::atomic<long> next_id{1};
};

void Server::Impl::routes() {
  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(dump({{"status", "ok"}, {"slots", pool.size()}, {"slots_busy", pool.busy()},
                          {"queue_length", pool.waiting()}}),
                    "application/json");
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.prometheus(pool.waiting(), pool.busy(), pool.size()), "text/plain; version=0.0.4");
  });
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    const GPTConfig& c = model.config;
    const json meta = {{"vocab_size", c.vocab_size}, {"block_size", c.block_size}, {"n_layer", c.n_layer},
                       {"n_head", c.n_head}, {"n_embd", c.n_embd}, {"tokenizer", model.tokenizer->kind()},
                       {"parameters", model.model->num_parameters()}, {"checkpoint", model.weights.string()}};
    res.set_content(dump({{"object", "list"},
                          {"data", json::array({{{"id", name}, {"object", "model"}, {"created", created},
                                                 {"owned_by", "potop"}, {"meta", meta}}})}}),
                    "application/json");
  });
  http.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) { completions(req, res); });
  http.Get("/v1/attention", [this](const httplib::Request& req, httplib::Response& res) { attention(req, res); });
  http.Post("/v1/attention", [this](const httplib::Request& req, httplib::Response& res) { attention(req, res); });
  http.Get(R"(/([A-Za-z0-9_.-]*))", [](const httplib::Request& req, httplib::Response& res) {
    std::string file = req.matches[1];
    if (file.empty()) file = "index.html";
    for (const WebAsset& a : web_assets())
      if (a.name == file) return res.set_content(std::string(a.data), mime_type(a.name));
    send_error(res, ApiError(404, "not_found", "", "no such page: /" + file));
  });

  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413)
      send_error(res, ApiError(413, "invalid_request_error", "", "the request body is too large"));
    else if (res.status == 404 || res.status == 405)
      send_error(res, ApiError(404, "not_found", "", "no such endpoint: " + req.method + " " + req.path));
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
    res.set_content(dump({{"error", {{"message", "internal error: " + what}, {"type", "server_error"}, {"param", nullptr}}}}),
                    "application/json");
  });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) { metrics.request(req.path, res.status); });
}

void Server::Impl::completions(const httplib::Request& req, httplib::Response& res) {
  // State shared with the content provider, which httplib calls after this handler returns.
  struct Job {
    CompletionRequest request;
    std::vector<int> ids;
    uint64_t seed = 0;
    Clock::time_point start, deadline;
    std::unique_ptr<SlotPool::Lease> lease;
    std::string id;
  };
  auto job = std::make_shared<Job>();
  try {
    job->request = parse_completion_request(req.body, options.limits);
    job->ids = encode_prompt(*model.tokenizer, job->request, options.limits, model.config.block_size);
    job->seed = job->request.seed.value_or(random_seed());
    job->start = Clock::now();
    job->deadline = job->start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(options.limits.timeout_s));
    job->lease = pool.acquire(job->deadline);
  } catch (const ApiError& e) {
    return send_error(res, e);
  }
  job->id = "cmpl-" + std::to_string(next_id++);

  // The batcher generates; this handler thread writes what it reports, so that a failed write
  // (the client left) cancels the generation and a slow client never holds up the batch.
  auto run = [this, job](httplib::DataSink& sink, bool stream) {
    const CompletionRequest& r = job->request;
    auto ticket = std::make_shared<Ticket>();
    Ticket* t = ticket.get();
    // Only a stream needs the tokens as they come: a plain answer is written from the result, so
    // its handler is not woken for every token (only when done, or to send a heartbeat).
    std::function<bool(const CompletionChunk&)> on_chunk = [t](const CompletionChunk&) { return !t->cancelled; };
    if (stream) on_chunk = [t](const CompletionChunk& chunk) { return t->push(chunk); };
    ticket->completion = std::make_unique<Completion>(*model.model, *model.tokenizer, r, job->ids, job->seed,
                                                      job->deadline, std::move(on_chunk), options.prefill_chunk);
    batcher.submit(ticket);
    // Without log-probs an event differs from the next only in its text: its JSON around the text
    // is built once, and a token costs one JSON string instead of a JSON object.
    const std::string event_json = dump(completion_object(job->id, "", nullptr, nullptr));
    const size_t text_key = event_json.find("\"text\":\"\"");  // keys are sorted: choices[0].text is first
    POTOP_CHECK(text_key != std::string::npos, "a completion object has a text");
    const std::string event_head = "data: " + event_json.substr(0, text_key + 7);
    const std::string event_tail = event_json.substr(text_key + 9) + "\n\n";
    auto last_write = Clock::now();
    bool client_left = false;
    std::string events;
    std::unique_lock lock(t->mutex);
    for (;;) {
      t->changed.wait_for(lock, std::chrono::milliseconds(500), [&] { return t->finished || !t->chunks.empty(); });
      std::deque<CompletionChunk> chunks;
      chunks.swap(t->chunks);
      const bool finished = t->finished;
      lock.unlock();
      // Every event that has come since the last write goes in one write (one system call).
      events.clear();
      for (const CompletionChunk& chunk : chunks) {
        if (r.logprobs >= 0)
          events += "data: " + dump(completion_object(job->id, chunk.text, logprobs_json(chunk.scores), nullptr)) + "\n\n";
        else
          events += event_head + dump(json(chunk.text)) + event_tail;
      }
      if (!events.empty() && !client_left) client_left = !sink.write(events.data(), events.size());
      // A JSON body may begin with whitespace: a space every half second tells whether the client
      // is still there, without changing what it parses.
      if (!stream && !client_left && !finished && Clock::now() - last_write >= std::chrono::milliseconds(500)) {
        last_write = Clock::now();
        client_left = !sink.write(" ", 1);
      }
      if (client_left) t->cancelled = true;  // the batcher drops it at its next step
      lock.lock();
      if (finished) break;
    }
    lock.unlock();
    const CompletionResult& out = t->result;
    const double seconds = std::chrono::duration<double>(Clock::now() - job->start).count();
    metrics.generation(out.prompt_tokens, out.completion_tokens, seconds, out.cancelled || client_left,
                       out.timed_out);
    job->lease.reset();  // the slot is free as soon as the tokens are
    if (out.cancelled || client_left || !t->error.empty()) return false;
    const json usage = {{"prompt_tokens", out.prompt_tokens}, {"completion_tokens", out.completion_tokens},
                        {"total_tokens", out.prompt_tokens + out.completion_tokens}};
    std::string tail;
    if (stream) {
      json last = completion_object(job->id, "", r.logprobs >= 0 ? logprobs_json({}) : json(), out.finish_reason);
      last["usage"] = usage;
      tail = "data: " + dump(last) + "\n\ndata: [DONE]\n\n";
    } else {
      json body = completion_object(job->id, out.text, r.logprobs >= 0 ? logprobs_json(out.scores) : json(),
                                    out.finish_reason);
      body["usage"] = usage;
      body["seed"] = out.seed;
      tail = dump(body);
    }
    if (!sink.write(tail.data(), tail.size())) return false;
    sink.done();
    return true;
  };
  if (job->request.stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [run](size_t, httplib::DataSink& sink) { return run(sink, true); });
  } else {
    res.set_chunked_content_provider("application/json", [run](size_t, httplib::DataSink& sink) { return run(sink, false); });
  }
}

void Server::Impl::attention(const httplib::Request& req, httplib::Response& res) {
  try {
    std::string text;
    if (req.method == "POST") {
      json body = json::parse(req.body, nullptr, false);
      if (body.is_discarded() || !body.is_object()) throw ApiError::invalid("", "the request body must be a JSON object");
      auto it = body.find("text");
      if (it == body.end() || !it->is_string()) throw ApiError::invalid("text", "text must be a string");
      text = it->get<std::string>();
    } else {
      if (!req.has_param("text")) throw ApiError::invalid("text", "the query parameter text is required");
      text = req.get_param_value("text");
    }
    std::vector<int> ids;
    try {
      ids = model.tokenizer->encode(text, "text");
    } catch (const Error& e) {
      throw ApiError::invalid("text", e.what());
    }
    const GPTConfig& c = model.config;
    const int max_tokens = std::min(c.block_size, options.limits.max_attention_tokens);
    if (ids.empty() || static_cast<int>(ids.size()) > max_tokens)
      throw ApiError::invalid("text", "text must hold 1 to " + std::to_string(max_tokens) + " tokens (got " +
                                          std::to_string(ids.size()) + ")");
    std::lock_guard attention_lock(attention_mutex);
    set_threads(1);  // beside the batcher, which has the cores
    GPT& gpt = *attention_model;
    const int T = static_cast<int>(ids.size());
    gpt.forward(Batch{{1, T}, ids.data(), nullptr}, Pass{});
    json layers = json::array();
    for (int l = 0; l < c.n_layer; ++l) {
      const float* att = gpt.attention(l);
      json heads = json::array();
      for (int h = 0; h < c.n_head; ++h) {
        json rows = json::array();
        for (int i = 0; i < T; ++i) {
          json row = json::array();
          // Keys after the query get no weight (the causal mask): rows stop at the diagonal.
          for (int j = 0; j <= i; ++j)
            row.push_back(std::round(att[(static_cast<size_t>(h) * T + i) * T + j] * 1e5) / 1e5);
          rows.push_back(std::move(row));
        }
        heads.push_back(std::move(rows));
      }
      layers.push_back(std::move(heads));
    }
    json tokens = json::array();
    for (int id : ids) tokens.push_back(model.tokenizer->decode_one(id));
    res.set_content(dump({{"tokens", tokens}, {"n_layer", c.n_layer}, {"n_head", c.n_head}, {"attention", layers}}),
                    "application/json");
  } catch (const ApiError& e) {
    send_error(res, e);
  }
}

Server::Server(LoadedGpt& model, const ServeOptions& options) {
  // Less for glibc to keep: by default every handler thread may get an arena of its own (up to 8
  // per core), each keeping what its requests freed. KV caches are left to glibc's dynamic mmap
  // threshold: after the first is freed they come from the arenas. Forcing them to be mapped and
  // unmapped (a fixed threshold) cost a quarter of the server's time at 16 clients in munmap's
  // TLB shootdowns and in page faults on fresh pages (docs/serve.md, Measured).
  mallopt(M_ARENA_MAX, 2);
  impl_ = std::make_unique<Impl>(model, options);
  Impl& s = *impl_;
  // Enough connections served at once for every slot, every queued request, and a few more so
  // that a refusal (503) or /metrics is answered at once while all slots are busy. Each on a
  // thread that exits when its connection closes (serve/connection_threads.h: a flat RSS).
  const int threads = options.slots + options.queue + 8;
  s.http.new_task_queue = [threads] { return new ConnectionThreads(static_cast<size_t>(threads)); };
  s.http.set_payload_max_length(options.limits.max_body_bytes);
  s.http.set_keep_alive_timeout(5);
  // A stream is one small write per token: Nagle's algorithm would hold each back until the
  // client acknowledged the one before.
  s.http.set_tcp_nodelay(true);
  // Remembered so that run() can raise the listen backlog; the options are httplib's own.
  s.http.set_socket_options([&s](int socket) {
    httplib::default_socket_options(socket);
    s.listening_socket = socket;
  });
  s.routes();
}

Server::~Server() = default;

void Server::run(const std::function<void(int port)>& on_ready) {
  Impl& s = *impl_;
  int port = s.options.port;
  if (port == 0) {
    port = s.http.bind_to_any_port(s.options.host);
    if (port < 0) throw Error("--host " + s.options.host + ": cannot listen there");
  } else if (!s.http.bind_to_port(s.options.host, port)) {
    throw Error("--port " + std::to_string(port) + ": cannot listen on " + s.options.host + ":" + std::to_string(port) +
                " (in use, or not an address of this machine)");
  }
  // Debian's cpp-httplib is a compiled library: it listens with a backlog of 5, fixed when Debian
  // built it (defining CPPHTTPLIB_LISTEN_BACKLOG here changes nothing). 16 clients connecting at
  // once overflowed it, and a dropped handshake waits for a 1 s SYN retry (first-token p99 ≈ 1.1 s).
  // On Linux a second listen() on the listening socket sets a new backlog.
  if (s.listening_socket >= 0) ::listen(s.listening_socket, 256);
  if (on_ready) on_ready(port);
  s.http.listen_after_bind();
}

void Server::stop() { impl_->http.stop(); }

}  // namespace potop::serve
