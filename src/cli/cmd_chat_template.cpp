// `potop chat-template SRC --messages FILE`: the prompt a conversation becomes — what `potop
// serve`'s /v1/chat/completions feeds the model — printed byte for byte. SRC is a model
// directory (its config.json's chat_template, else the plain template), a Hugging Face
// tokenizer_config.json (its chat_template), a .json file of potop's template form, or a Jinja
// file (serve/chat_template_source.h). tests/chat compares its output with npm's @huggingface/jinja
// on real models' templates.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "serve/chat_template_source.h"

namespace potop::cli {

namespace {

struct ChatTemplateArgs {
  std::string source, messages;
  bool no_generation_prompt = false;
};

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
    const serve::ChatTemplate t = serve::chat_template_from_source(a->source);
    const std::string text = serve::render_conversation_file(t, a->messages, !a->no_generation_prompt);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  };
}

}  // namespace potop::cli
