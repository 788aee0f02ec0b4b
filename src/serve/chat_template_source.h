// A chat template named by a file or directory, and a conversation file rendered under it: what
// `potop chat-template SRC --messages FILE` prints, kept here so that tests/chat/render_corpus.cpp
// can render every context of tests/chat/cases in one process the same way.
#pragma once
#include <string>

#include "serve/chat_request.h"

namespace potop::serve {

// SRC: a model directory (its config.json's chat_template, else the plain template), a Hugging
// Face tokenizer_config.json (its chat_template), a .json file of potop's template form, or a
// Jinja file. Throws Error naming SRC when it holds no usable template.
ChatTemplate chat_template_from_source(const std::string& source);

// The prompt the conversation in the JSON file at `path` becomes: a messages array
// ([{"role": "user", "content": ...}], with add_generation_prompt = generation_prompt), or an
// object of every variable a Jinja template reads. Throws Error naming the file.
std::string render_conversation_file(const ChatTemplate& t, const std::string& path, bool generation_prompt);

}  // namespace potop::serve
