#include "serve/http_json.h"

#include "serve/completion_request.h"
#include "serve/guarded_http_server.h"

namespace potop::serve {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void send_json(httplib::Response& res, const json& body) {
  std::string text = dump(body);
  // The body and the JSON it was made from (an attention map's is MiBs) are freed in this
  // request thread's arena once sent: counted, so that the server hands such memory back.
  note_memory_freed(text.size());
  res.set_content(std::move(text), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  if (e.status == 503) res.set_header("Retry-After", "1");
  send_json(res, e.body());
}

json json_object_body(const httplib::Request& req) { return parse_request_json(req.body); }

std::string string_field(const json& body, const std::string& name) {
  auto it = body.find(name);
  if (it == body.end() || !it->is_string()) throw ApiError::invalid(name, name + " must be a string");
  return it->get<std::string>();
}

std::string text_of(const httplib::Request& req) {
  if (req.method == "POST") return string_field(json_object_body(req), "text");
  if (!req.has_param("text")) throw ApiError::invalid("text", "the query parameter text is required");
  return req.get_param_value("text");
}

}  // namespace potop::serve
