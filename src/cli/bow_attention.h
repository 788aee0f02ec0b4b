// What a bag-of-words LM attends to: for each predicted word of a short text, the weights it put
// on the earlier words, as a table on stdout (and a heat map in an HTML file). `potop attention`
// and `potop bow attention` both show it.
#pragma once
#include <string>

#include "nn/tasks.h"

namespace potop::cli {

// A model's WordAttention (nn/tasks.h) on a text: a table on stdout, and the heat map written to
// html (when given). weights_file and choice: the checkpoint loaded, for messages.
int print_word_attention(WordAttention& model, const Tokenizer& tokenizer, const std::string& weights_file,
                         const std::string& choice, const std::string& text, const std::string& html);

}  // namespace potop::cli
