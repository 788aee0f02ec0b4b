// `potop serve`: an OpenAI-compatible HTTP API and the web studio for one trained model
// (src/serve; docs/serve.md). Stops cleanly on SIGINT, SIGTERM or SIGHUP.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_args.h"
#include "core/stop_signals.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/threads.h"
#include "serve/server.h"

namespace potop::cli {

namespace {


struct ServeArgs {
  ModelArgs model;
  serve::ServeOptions options;
  double max_body_kib = 1024;
  std::string chat_template, api_key_file, kv_cache = "f32";
};

// After SIGTERM, how long connections still open may take to finish before the process exits
// anyway: a client that trickles its request must not hold the server up.
constexpr auto kStopGrace = std::chrono::seconds(4);

void check(bool ok, const std::string& message) {
  if (!ok) throw Error(message);
}

}  // namespace

Run add_serve(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("serve", "serve a trained model over HTTP: an OpenAI-style API and a web studio");
  auto a = std::make_shared<ServeArgs>();
  serve::ServeOptions& flags = a->options;
  serve::Limits& limit_flags = flags.limits;
  add_model_options(cmd, a->model);
  add_kv_cache_option(cmd, a->kv_cache);
  cmd->get_option("--threads")
      ->description("threads of the model's forward passes (a causal LM's batcher; the other kinds' requests, one at a "
                    "time) (0 = half the cores, at least 1; the other cores serve the connections)");
  cmd->add_option("--host", flags.host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", flags.port, "port to listen on (0 = any free port, printed on stderr)")->capture_default_str();
  cmd->add_option("--slots", flags.slots, "generations that run at once, decoded together in one batch, each with its "
                                      "own KV cache")
      ->capture_default_str();
  cmd->add_option("--prefill-chunk", flags.prefill_chunk, "most prompt tokens read in one forward pass between two "
                                                      "decoding steps of the batch")
      ->capture_default_str();
  cmd->add_option("--queue", flags.queue, "requests that may wait for a free slot; more are refused with 503")
      ->capture_default_str();
  cmd->add_option("--max-body-kib", a->max_body_kib, "largest request body accepted (413 beyond)")->capture_default_str();
  cmd->add_option("--max-tokens", limit_flags.max_tokens, "most tokens one completion may ask for")->capture_default_str();
  cmd->add_option("--default-max-tokens", limit_flags.default_max_tokens, "tokens generated when a request gives no max_tokens")
      ->capture_default_str();
  cmd->add_option("--max-prompt-tokens", limit_flags.max_prompt_tokens, "longest prompt accepted, in tokens")->capture_default_str();
  cmd->add_option("--timeout", limit_flags.timeout_s, "seconds a request may take, waiting included; a generation still running "
                                            "then ends with what it has")
      ->capture_default_str();
  cmd->add_option("--max-logprobs", limit_flags.max_logprobs, "most alternatives per token a request may ask for")
      ->capture_default_str();
  cmd->add_option("--chat-template", a->chat_template,
                  "the chat template /v1/chat/completions renders messages with: a .json file of potop's form, or a "
                  "Jinja file as Hugging Face's chat_template (docs/serve.md; default: the model's, else plain)");
  add_choice(cmd, "--unknown", unknown_choice(flags.unknown),
             "a prompt's characters the model never saw: error (400), skip them, or replace them with its stand-in, "
             "as train takes them");
  cmd->add_option("--alias", flags.aliases, "another name a request's \"model\" may give (repeatable); any other "
                                            "name is 404 model_not_found");
  cmd->add_option("--max-connections", flags.max_connections, "connections open at once, in all; past it a new one "
                                                             "takes the place of the oldest idle one (503 when every "
                                                             "one is busy with a request)")
      ->capture_default_str();
  cmd->add_option("--max-client-connections", flags.connections.max_per_client,
                  "connections one client address may hold open at once; past it a new one takes the place of "
                  "that address's oldest idle one (429 when every one is busy with a request; 0: no cap, e.g. "
                  "behind a reverse proxy that has its own)")
      ->capture_default_str();
  cmd->add_option("--header-timeout", flags.connections.header_timeout_s,
                  "seconds a request's line and headers may take to arrive, from its first byte (408 beyond)")
      ->capture_default_str();
  cmd->add_option("--body-timeout", flags.connections.body_timeout_s,
                  "seconds a request's body may take to arrive, from the end of its headers (408 beyond)")
      ->capture_default_str();
  cmd->add_option("--api-key", flags.guard.api_key, "a key every /v1 request must send as \"Authorization: Bearer KEY\" "
                                                    "(401 otherwise; see also --api-key-file)");
  cmd->add_option("--api-key-file", a->api_key_file, "read the API key from this file's first line (it stays out of "
                                                     "the process list)");
  cmd->add_option("--cors-origin", flags.guard.cors_origins, "a web origin (https://app.example) whose pages may call the "
                                                             "API (repeatable; * allows every origin)");
  cmd->add_option("--allow-host", flags.guard.allowed_hosts, "a Host name served besides the loopback ones when "
                                                             "listening on a loopback address (a reverse proxy's; "
                                                             "repeatable)");
  cmd->add_option("--max-attention-tokens", limit_flags.max_attention_tokens, "longest text /v1/attention takes, in tokens")
      ->capture_default_str();
  return [a]() {
    serve::ServeOptions& o = a->options;
    serve::Limits& l = o.limits;
    check(o.port >= 0 && o.port <= 65535, "--port must be between 0 and 65535 (got " + std::to_string(o.port) + ")");
    check(o.slots >= 1 && o.slots <= 256, "--slots must be between 1 and 256 (got " + std::to_string(o.slots) + ")");
    check(o.prefill_chunk >= 1, "--prefill-chunk must be >= 1 (got " + std::to_string(o.prefill_chunk) + ")");
    check(o.queue >= 0 && o.queue <= 4096, "--queue must be between 0 and 4096 (got " + std::to_string(o.queue) + ")");
    check(a->max_body_kib >= 1 && a->max_body_kib <= 1 << 20, "--max-body-kib must be between 1 and 1048576");
    check(l.max_tokens >= 1, "--max-tokens must be >= 1 (got " + std::to_string(l.max_tokens) + ")");
    check(l.default_max_tokens >= 0 && l.default_max_tokens <= l.max_tokens,
          "--default-max-tokens must be between 0 and --max-tokens (got " + std::to_string(l.default_max_tokens) + ")");
    check(l.max_prompt_tokens >= 1, "--max-prompt-tokens must be >= 1 (got " + std::to_string(l.max_prompt_tokens) + ")");
    check(l.timeout_s > 0 && l.timeout_s <= 86400, "--timeout must be between 0 and 86400 seconds");
    check(l.max_logprobs >= 0 && l.max_logprobs <= 1000, "--max-logprobs must be between 0 and 1000");
    check(l.max_attention_tokens >= 1, "--max-attention-tokens must be >= 1");
    l.max_body_bytes = static_cast<size_t>(a->max_body_kib * 1024);
    check(o.max_connections >= 1 && o.max_connections <= 65536, "--max-connections must be between 1 and 65536");
    const serve::ConnectionLimits& c = o.connections;
    check(c.max_per_client >= 0 && c.max_per_client <= 65536, "--max-client-connections must be between 0 and 65536");
    check(c.header_timeout_s >= 0.1 && c.header_timeout_s <= 3600, "--header-timeout must be between 0.1 and 3600 seconds");
    check(c.body_timeout_s >= 0.1 && c.body_timeout_s <= 3600, "--body-timeout must be between 0.1 and 3600 seconds");
    if (!a->api_key_file.empty()) {
      check(o.guard.api_key.empty(), "--api-key and --api-key-file: give one");
      const std::string text = read_file(a->api_key_file);
      o.guard.api_key = text.substr(0, text.find_first_of("\r\n"));
      check(!o.guard.api_key.empty(), "--api-key-file " + a->api_key_file + ": the first line is empty");
    }
    for (const std::string& origin : o.guard.cors_origins)
      check(origin == "*" || origin.starts_with("http://") || origin.starts_with("https://"),
            "--cors-origin " + origin + ": an origin is scheme://host[:port], e.g. https://app.example (or *)");
    if (!a->chat_template.empty()) o.chat_template = serve::chat_template_from_file(a->chat_template);
    const KVCacheType cache_type = parse_kv_cache_type(a->kv_cache, "--kv-cache");
    LoadedModel m = load_model(a->model);
    if (CausalLM* lm = task<CausalLM>(*m.model)) lm->set_kv_cache_type(cache_type);
    if (!serve::servable(*m.kind))
      throw wrong_kind(a->model.model, *m.kind, kind_nouns(serve::servable) + " (the kinds potop serve answers)");
    announce(m);
    // A Jinja template given with --chat-template reads the model's special tokens too.
    if (o.chat_template && o.chat_template->jinja) o.chat_template->variables = serve::special_token_texts(*m.tokenizer);
    if (!o.chat_template && m.kind->can(Task::kCausalLM)) {
      // A model's Jinja template potop cannot render: say so once, and chat with the plain one.
      std::string fallback;
      o.chat_template = serve::model_chat_template(m.files, serve::special_token_texts(*m.tokenizer), &fallback);
      if (!fallback.empty())
        std::fprintf(stderr, "potop serve: the model's chat template is not used (%s); chats use the plain template "
                             "(--chat-template FILE gives another)\n", fallback.c_str());
      else if (o.chat_template->jinja)
        std::fprintf(stderr, "potop serve: chats use the model's own chat template (Jinja, from its config.json)\n");
    }
    // The batcher's: one forward pass serves every slot. Not every core by default: an OpenMP team
    // waits at each barrier for its slowest thread, and a team spanning every core keeps waiting
    // for a thread the connections (or another process) displaced. On 2 busy cores, 2 threads
    // gave a quarter of 1 thread's tokens/s (docs/serve.md, "Threads").
    o.threads = a->model.threads > 0 ? a->model.threads : std::max(1, hardware_threads() / 2);

    // A causal LM's generations are batched; the other models' requests run one at a time.
    const std::string how = m.kind->can(Task::kCausalLM) ? "batches of up to " + std::to_string(o.slots) + ", " +
                                                        std::to_string(o.threads) + " threads, queue " +
                                                        std::to_string(o.queue) + ", " + to_string(cache_type) +
                                                        " KV caches"
                                                  : m.kind->noun + ": one request at a time, " +
                                                        std::to_string(o.threads) + " threads";
    serve::Server server(std::move(m), o);
    std::signal(SIGPIPE, SIG_IGN);  // a client that left is a failed write, never the end of the server
    stop_on_signal();
    std::atomic<bool> done{false};
    std::thread watcher([&] {
      while (!done && !stop_signal_received()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      server.stop();
      // run() returns once every connection has closed; one that does not (a client trickling its
      // request) is dropped with the process after the grace period.
      const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
      while (!done && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (!done) {
        std::fprintf(stderr, "serve: stopped by signal %d; connections still open after %lld s were dropped\n",
                     stop_signal_received(), static_cast<long long>(kStopGrace.count()));
        std::_Exit(0);
      }
    });
    try {
      server.run([&](int port) {
        std::fprintf(stderr, "serve: listening on http://%s:%d (%s)\n", o.host.c_str(), port, how.c_str());
      });
    } catch (...) {
      done = true;
      watcher.join();
      throw;
    }
    done = true;
    watcher.join();
    if (const int signo = stop_signal_received()) std::fprintf(stderr, "serve: stopped by signal %d\n", signo);
    return 0;
  };
}

}  // namespace potop::cli
