#include "serve/chat_template_source.h"

#include <filesystem>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

#include "checkpoint/hf_import.h"
#include "checkpoint/model_dir.h"
#include "core/error.h"
#include "core/file_io.h"
#include "serve/api_error.h"

namespace potop::serve {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The variables nest at most 500 deep, as the renderer takes them, checked without recursion
// (copying a JSON value nested 100,000 deep would exhaust the stack).
void check_nesting(const nlohmann::ordered_json& j, const std::string& source) {
  std::vector<std::pair<const nlohmann::ordered_json*, int>> pending{{&j, 0}};
  while (!pending.empty()) {
    const auto [node, depth] = pending.back();
    pending.pop_back();
    if (depth > 500) throw Error(source + ": variables nested more than 500 deep are not supported");
    if (node->is_structured())
      for (const auto& child : *node) pending.emplace_back(&child, depth + 1);
  }
}

}  // namespace

ChatTemplate chat_template_from_source(const std::string& source) {
  if (fs::is_directory(source)) {
    const ModelFiles files = read_model_files(source);
    std::string fallback;
    ChatTemplate t = model_chat_template(files.files, special_token_texts(*files.tokenizer), &fallback);
    if (!fallback.empty()) throw Error(fallback);
    return t;
  }
  if (!source.ends_with(".json")) return jinja_chat_template(read_file(source), source);
  const json j = read_json_file(source);
  if (j.is_object() && j.contains("chat_template")) {  // tokenizer_config.json
    const std::string text = hf_chat_template(j, source);
    if (text.empty()) throw Error(source + ": chat_template is null");
    return jinja_chat_template(text, source + ": chat_template");
  }
  return chat_template_from_json(j, source);
}

std::string render_conversation_file(const ChatTemplate& t, const std::string& path, bool generation_prompt) {
  // Read in order: a template's tojson prints keys as written.
  const auto given = nlohmann::ordered_json::parse(read_file(path), nullptr, false);
  if (given.is_discarded()) throw Error(path + ": not valid JSON");
  check_nesting(given, path);
  try {
    std::string last_user;
    if (given.is_object()) {
      // Every variable as given: a Jinja template renders them as they are.
      if (!t.jinja)
        return render_chat(t, json(given.value("messages", nlohmann::ordered_json())), last_user,
                           given.value("add_generation_prompt", true));
      nlohmann::ordered_json context = t.variables;
      for (const auto& [key, value] : given.items()) context[key] = value;
      return t.jinja->render(context);
    }
    if (t.jinja) {  // the messages as they are, as Hugging Face's apply_chat_template takes them
      nlohmann::ordered_json context = t.variables;
      context["messages"] = given;
      context["add_generation_prompt"] = generation_prompt;
      return t.jinja->render(context);
    }
    return render_chat(t, json(given), last_user, generation_prompt);
  } catch (const ApiError& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace potop::serve
