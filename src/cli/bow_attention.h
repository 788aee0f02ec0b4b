// What a bag-of-words LM attends to: for each predicted word of a short text, the weights it put
// on the earlier words, as a table on stdout (and a heat map in an HTML file). `potop attention`
// and `potop bow attention` both show it.
#pragma once
#include <string>

#include "models/bow/bow_model_dir.h"

namespace potop::cli {

int print_bow_attention(LoadedBow& m, const std::string& text, const std::string& html);

}  // namespace potop::cli
