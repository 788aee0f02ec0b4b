// `potop chat-template SRC --messages FILE`: the prompt a conversation becomes — what `potop
// serve`'s /v1/chat/completions feeds the model — printed byte for byte. SRC is a model
// directory (its config.json's chat_template, else the plain template), a Hugging Face
// tokenizer_config.json (its chat_template), a .json file of potop's template form, or a Jinja
// file. tests/chat compares its output with npm's @huggingface/jinja on real models' templates.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

#include "checkpoint/hf_import.h"
#include "checkpoint/model_dir.h"
#include "cli/commands.h"
#include "core/error.h"
#include "core/file_io.h"
#include "serve/api_error.h"
#include "serve/chat_request.h"

namespace potop::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ChatTemplateArgs {
  std::string source, messages;
  bool no_generation_prompt = false;
};

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

serve::ChatTemplate template_from(const std::string& source) {
  if (fs::is_directory(source)) {
    const ModelFiles files = read_model_files(source);
    std::string fallback;
    serve::ChatTemplate t = serve::model_chat_template(files.files, serve::special_token_texts(*files.tokenizer), &fallback);
    if (!fallback.empty()) throw Error(fallback);
    return t;
  }
  if (!source.ends_with(".json")) return serve::jinja_chat_template(read_file(source), source);
  const json j = read_json_file(source);
  if (j.is_object() && j.contains("chat_template")) {  // tokenizer_config.json
    const std::string text = hf_chat_template(j, source);
    if (text.empty()) throw Error(source + ": chat_template is null");
    return serve::jinja_chat_template(text, source + ": chat_template");
  }
  return serve::chat_template_from_json(j, source);
}

}  // namespace

Run add_chat_template(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("chat-template", "print the prompt a conversation becomes under a chat template "
                                                      "(what potop serve's chat feeds the model)");
  auto a = std::make_shared<ChatTemplateArgs>();
  cmd->add_option("source", a->source, "a model directory, a tokenizer_config.json, a .json template of potop's form, "
                                       "or a Jinja file")
      ->required();
  cmd->add_option("--messages", a->messages, "a JSON file: the messages ([{\"role\": \"user\", \"content\": ...}]), "
                                             "or an object of every variable a Jinja template reads (messages, "
                                             "add_generation_prompt, bos_token, ...)")
      ->required();
  cmd->add_flag("--no-generation-prompt", a->no_generation_prompt,
                "end after the last message (add_generation_prompt false), for a messages array");
  return [a]() {
    const serve::ChatTemplate t = template_from(a->source);
    // Read in order: a template's tojson prints keys as written.
    const auto given = nlohmann::ordered_json::parse(read_file(a->messages), nullptr, false);
    if (given.is_discarded()) throw Error(a->messages + ": not valid JSON");
    check_nesting(given, a->messages);
    std::string text;
    try {
      if (given.is_object()) {
        // Every variable as given: a Jinja template renders them as they are.
        if (!t.jinja) {
          std::string last_user;
          text = serve::render_chat(t, json(given.value("messages", nlohmann::ordered_json())), last_user,
                                    given.value("add_generation_prompt", true));
        } else {
          nlohmann::ordered_json context = t.variables;
          for (const auto& [key, value] : given.items()) context[key] = value;
          text = t.jinja->render(context);
        }
      } else if (t.jinja) {  // the messages as they are, as Hugging Face's apply_chat_template takes them
        nlohmann::ordered_json context = t.variables;
        context["messages"] = given;
        context["add_generation_prompt"] = !a->no_generation_prompt;
        text = t.jinja->render(context);
      } else {
        std::string last_user;
        text = serve::render_chat(t, json(given), last_user, !a->no_generation_prompt);
      }
    } catch (const serve::ApiError& e) {
      throw Error(a->messages + ": " + e.what());
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  };
}

}  // namespace potop::cli
