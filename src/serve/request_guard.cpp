#include "serve/request_guard.h"

#include <algorithm>

#include "serve/api_error.h"
#include "serve/http_json.h"

namespace potop::serve {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// "name" of "name:port", "[::1]:port", "[::1]".
std::string host_name(const std::string& host) {
  if (host.starts_with("[")) {
    const size_t end = host.find(']');
    return end == std::string::npos ? host : host.substr(0, end + 1);
  }
  const size_t colon = host.rfind(':');
  return lower(colon == std::string::npos ? host : host.substr(0, colon));
}

// The host[:port] of an origin "scheme://host[:port]".
std::string origin_host(const std::string& origin) {
  const size_t at = origin.find("://");
  return at == std::string::npos ? origin : lower(origin.substr(at + 3));
}

// "scheme://host[:port]" of a URL, "" if it has none.
std::string url_origin(const std::string& url) {
  const size_t at = url.find("://");
  if (at == std::string::npos) return "";
  return url.substr(0, url.find('/', at + 3));
}

// Where a page's request to the API came from when it carries no Origin header: a no-cors GET
// (an <img>, a <script>, a prefetch of GET /v1/attention?text=...) names it only in
// Sec-Fetch-Site (browsers send it to https and loopback servers) and in its Referer (unless the
// page withheld it). "" when nothing says another page sent it.
std::string page_origin(const httplib::Request& req) {
  const std::string referer = url_origin(req.get_header_value("Referer"));
  const std::string site = lower(req.get_header_value("Sec-Fetch-Site"));
  if ((site == "cross-site" || site == "same-site") && referer.empty()) return "a page of another site";
  return referer;
}

bool allowed_origin(const GuardOptions& o, const std::string& origin) {
  return std::any_of(o.cors_origins.begin(), o.cors_origins.end(),
                     [&](const std::string& allowed) { return allowed == "*" || allowed == origin; });
}

// Compares in a time that does not depend on where the two first differ, so that timing tells
// nothing of the key. key is not empty.
bool same_secret(const std::string& given, const std::string& key) {
  size_t diff = given.size() ^ key.size();
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i]) ^ static_cast<unsigned char>(key[i % key.size()]);
  return diff == 0;
}

bool refuse(httplib::Response& res, int status, const std::string& code, const std::string& message) {
  send_error(res, ApiError(status, status == 401 ? "authentication_error" : "invalid_request_error", "", message, code));
  return true;
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  if (host == "::1") return true;  // an address (--host ::1), not host:port
  const std::string name = host_name(host);
  // 127.x.y.z as an address, not a name that begins so (127.0.0.1.evil.example)
  const bool ipv4_loopback = name.starts_with("127.") && std::count(name.begin(), name.end(), '.') == 3 &&
                             name.find_first_not_of("0123456789.") == std::string::npos;
  return name == "localhost" || name == "[::1]" || name == "::1" || ipv4_loopback;
}

bool guard_request(const GuardOptions& o, const httplib::Request& req, httplib::Response& res) {
  const std::string host = req.get_header_value("Host");
  if (o.loopback && !is_loopback_host(host) &&
      std::find(o.allowed_hosts.begin(), o.allowed_hosts.end(), host_name(host)) == o.allowed_hosts.end())
    return refuse(res, 403, "host_not_allowed",
                  "Host '" + host + "' is not served: the server listens on a loopback address and answers loopback "
                  "names only (potop serve --allow-host NAME adds one)");

  const std::string origin = req.get_header_value("Origin");
  const bool cross_origin = !origin.empty() && origin_host(origin) != lower(host);
  if (cross_origin && !allowed_origin(o, origin))
    return refuse(res, 403, "origin_not_allowed",
                  "requests from " + origin + " are not allowed (potop serve --cors-origin ORIGIN allows one)");
  // The API's GETs do work too (GET /v1/attention runs the model): another page's no-cors GET,
  // which has no Origin, is refused as its Origin would be. Its navigations to the studio are not.
  if (origin.empty() && req.path.starts_with("/v1/")) {
    const std::string from = page_origin(req);
    if (!from.empty() && origin_host(from) != lower(host) && !allowed_origin(o, from))
      return refuse(res, 403, "origin_not_allowed",
                    "requests from " + from + " are not allowed (potop serve --cors-origin ORIGIN allows one)");
  }
  if (req.method == "OPTIONS") {  // a CORS preflight of an allowed origin (or a bare OPTIONS)
    if (cross_origin) add_cors_headers(o, req, res);
    res.status = 204;
    return true;
  }

  if (req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
    const std::string type = lower(req.get_header_value("Content-Type"));
    const bool json_body = type.starts_with("application/json");
    const bool empty = req.get_header_value("Content-Length").empty() || req.get_header_value("Content-Length") == "0";
    if (!json_body && !empty)
      return refuse(res, 415, "unsupported_media_type",
                    "a request body must be JSON, sent as Content-Type: application/json (got '" + type + "')");
  }
  if (!o.api_key.empty() && req.path.starts_with("/v1/")) {
    const std::string auth = req.get_header_value("Authorization");
    const std::string key = auth.starts_with("Bearer ") ? auth.substr(7) : "";
    if (!same_secret(key, o.api_key))
      return refuse(res, 401, "invalid_api_key",
                    auth.empty() ? "an API key is required: send it as \"Authorization: Bearer KEY\""
                                 : "the API key is not valid");
  }

  if (cross_origin) add_cors_headers(o, req, res);
  return false;
}

void add_cors_headers(const GuardOptions& o, const httplib::Request& req, httplib::Response& res) {
  const std::string origin = req.get_header_value("Origin");
  if (origin.empty() || !allowed_origin(o, origin)) return;
  res.set_header("Access-Control-Allow-Origin", origin);
  res.set_header("Vary", "Origin");
  res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
  res.set_header("Access-Control-Max-Age", "600");
}

}  // namespace potop::serve
