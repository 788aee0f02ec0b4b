// What every endpoint of the server shares: JSON bodies in and out, errors as OpenAI sends them
// (api_error.h), and the text a request is about.
#pragma once
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "serve/api_error.h"

namespace potop::serve {

// Generated text may hold stray bytes (a byte token alone): they become U+FFFD, never an exception.
std::string dump(const nlohmann::json& j);

void send_json(httplib::Response& res, const nlohmann::json& body);
void send_error(httplib::Response& res, const ApiError& e);

// The request body as a JSON object; anything else is a 400.
nlohmann::json json_object_body(const httplib::Request& req);
// The string field `name` of a body; absent or not a string is a 400 naming it.
std::string string_field(const nlohmann::json& body, const std::string& name);
// The text a GET (?text=...) or a POST ({"text": ...}) is about.
std::string text_of(const httplib::Request& req);

}  // namespace potop::serve
