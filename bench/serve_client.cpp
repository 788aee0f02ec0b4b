// The load generator of bench/serve_load.py, in C++ so that it costs the 2 cores little next to
// the server it measures (the Python one parsed every server-sent event in 16 interpreter
// threads, on the same cores as `potop serve`).
//
//   serve_client --port P --clients N --seconds S [--max-tokens 32] [--stream] [--prompt TEXT]
//
// Each of N clients sends completions of the prompt back to back, one connection per request
// (as the Python client did), seed = a distinct number per request. Prints one JSON object:
// requests, ok (200), failed, wall seconds, completion tokens (the responses' usage), latency
// p50/p99 (ms, the whole request) and, with --stream, time to the first token's event p50/p99.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int port = 0, clients = 1, max_tokens = 32;
  double seconds = 5;
  bool stream = false;
  std::string prompt = "Pan Kmicic ";
};

struct Outcome {
  bool ok = false;
  double latency_ms = 0, first_ms = -1;
  long tokens = 0;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "serve_client: %s\nusage: serve_client --port P --clients N --seconds S [--max-tokens M] "
                       "[--stream] [--prompt TEXT]\n", why);
  std::exit(1);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(("a value is missing after " + std::string(a)).c_str());
      return argv[++i];
    };
    if (a == "--port") o.port = std::atoi(value());
    else if (a == "--clients") o.clients = std::atoi(value());
    else if (a == "--seconds") o.seconds = std::atof(value());
    else if (a == "--max-tokens") o.max_tokens = std::atoi(value());
    else if (a == "--prompt") o.prompt = value();
    else if (a == "--stream") o.stream = true;
    else usage(("unknown flag " + std::string(a)).c_str());
  }
  if (o.port <= 0 || o.clients < 1 || o.seconds <= 0 || o.max_tokens < 0) usage("--port, --clients, --seconds are required and positive");
  return o;
}

// The prompt as a JSON string (quotes, backslashes and control characters escaped).
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += c;
  }
  return out + "\"";
}

// The last "completion_tokens": N in a body (the usage object comes last).
long completion_tokens(const std::string& body) {
  const std::string key = "\"completion_tokens\":";
  const size_t at = body.rfind(key);
  return at == std::string::npos ? 0 : std::atol(body.c_str() + at + key.size());
}

Outcome request(const Options& o, long seed) {
  const std::string body = "{\"prompt\": " + json_string(o.prompt) + ", \"max_tokens\": " + std::to_string(o.max_tokens) +
                           ", \"seed\": " + std::to_string(seed) + (o.stream ? ", \"stream\": true}" : "}");
  const auto start = Clock::now();
  auto ms = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
  Outcome out;
  httplib::Client client("127.0.0.1", o.port);
  client.set_read_timeout(120);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.set_header("Content-Type", "application/json");
  req.body = body;
  std::string received;
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    // A streamed answer's first event is the first token ("data: {"); a plain one's first bytes
    // may be heartbeat spaces, so first_ms means something only with --stream.
    if (out.first_ms < 0 && std::string_view(data, n).find("data: {") != std::string_view::npos) out.first_ms = ms();
    received.append(data, n);
    return true;
  };
  const httplib::Result res = client.send(req);
  out.latency_ms = ms();
  out.ok = res && res->status == 200;
  if (out.ok) out.tokens = completion_tokens(received);
  return out;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p / 100 * (v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::mutex mutex;
  std::vector<Outcome> outcomes;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  std::vector<std::thread> clients;
  for (int k = 0; k < o.clients; ++k)
    clients.emplace_back([&, k] {
      std::vector<Outcome> mine;
      for (long n = 0; Clock::now() < end; ++n) mine.push_back(request(o, k * 100000L + n));
      std::lock_guard lock(mutex);
      outcomes.insert(outcomes.end(), mine.begin(), mine.end());
    });
  for (std::thread& t : clients) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> latency, first;
  long ok = 0, tokens = 0;
  for (const Outcome& r : outcomes) {
    if (!r.ok) continue;
    ++ok, tokens += r.tokens;
    latency.push_back(r.latency_ms);
    if (r.first_ms >= 0) first.push_back(r.first_ms);
  }
  std::printf("{\"clients\": %d, \"stream\": %s, \"requests\": %zu, \"ok\": %ld, \"failed\": %ld, \"seconds\": %.3f, "
              "\"tokens\": %ld, \"latency_p50_ms\": %.2f, \"latency_p99_ms\": %.2f, \"first_p50_ms\": %.2f, "
              "\"first_p99_ms\": %.2f}\n",
              o.clients, o.stream ? "true" : "false", outcomes.size(), ok, static_cast<long>(outcomes.size()) - ok, wall,
              tokens, percentile(latency, 50), percentile(latency, 99), percentile(first, 50), percentile(first, 99));
  return 0;
}
