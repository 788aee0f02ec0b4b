// A client's mistake in a request: the HTTP status it earns and the OpenAI-style error body
// {"error": {"message", "type", "param", "code"}} that names the field (code: a machine-readable
// reason such as "model_not_found", or null). The server answers it and goes
// on; only our own bugs may become a 500.
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace potop::serve {

class ApiError : public std::runtime_error {
 public:
  ApiError(int http_status, std::string error_type, std::string field, const std::string& message,
           std::string error_code = "")
      : std::runtime_error(message),
        status(http_status),
        type(std::move(error_type)),
        param(std::move(field)),
        code(std::move(error_code)) {}
  // 400 invalid_request_error naming `param`.
  static ApiError invalid(std::string param, const std::string& message) {
    return ApiError(400, "invalid_request_error", std::move(param), message);
  }

  nlohmann::json body() const {
    auto or_null = [](const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); };
    return {{"error", {{"message", what()}, {"type", type}, {"param", or_null(param)}, {"code", or_null(code)}}}};
  }

  int status;
  std::string type, param, code;
};

}  // namespace potop::serve
