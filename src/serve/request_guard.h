// What every request passes before any endpoint reads it, so that the server is safe to expose
// (docs/serve.md, "Exposing the server"):
//   - Host: on a loopback address only loopback names are served (127.0.0.1, localhost, [::1],
//     with any port), so that a web page whose DNS name is rebound to 127.0.0.1 cannot reach the
//     server (DNS rebinding); --allow-host adds names (a reverse proxy's).
//   - Origin: a browser request from another origin is refused (403) unless --cors-origin allows
//     that origin, which then gets CORS headers and its OPTIONS preflights answered (204). An API
//     request without Origin (a page's <img> of GET /v1/attention) is judged by its
//     Sec-Fetch-Site and Referer headers instead.
//   - POST bodies: JSON only (415 otherwise: a page's no-cors text/plain or form POST never
//     starts a generation). Their framing (a Content-Length, never chunked; its cap) was checked
//     before the request was read whole (serve/request_frame.h).
//   - --api-key: every /v1 request needs "Authorization: Bearer KEY" (401 otherwise, as OpenAI
//     answers); /health, /metrics' absence of secrets aside, and the studio's pages stay open.
#pragma once
#include <httplib.h>

#include <string>
#include <vector>

namespace potop::serve {

struct GuardOptions {
  std::string api_key;                    // empty: none
  std::vector<std::string> cors_origins;  // "*" allows every origin
  std::vector<std::string> allowed_hosts; // Host names served besides the loopback ones
  bool loopback = true;                   // bound to a loopback address: check the Host header
};

// Whether host:port is a loopback address (127.0.0.0/8, ::1, localhost).
bool is_loopback_host(const std::string& host);

// Answers the request itself when it must not reach an endpoint (a refusal, or a CORS
// preflight): returns true then.
bool guard_request(const GuardOptions& options, const httplib::Request& req, httplib::Response& res);

// The CORS headers of an allowed cross-origin request's response.
void add_cors_headers(const GuardOptions& options, const httplib::Request& req, httplib::Response& res);

}  // namespace potop::serve
