#include "cli/bow_attention.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/error.h"
#include "core/file_io.h"
#include "report/attention_map.h"

namespace potop::cli {

namespace {

// A word as a table cell: whitespace made visible, long words cut.
std::string cell(const Tokenizer& tokenizer, int id) {
  std::string s = tokenizer.decode_one(id);
  if (s == "\n") return "↵";
  if (!s.empty() && s.find_first_not_of(' ') == std::string::npos) return "␣";
  return s;
}

}  // namespace

int print_word_attention(WordAttention& model, const Tokenizer& tokenizer, const std::string& weights_file,
                         const std::string& choice, const std::string& text, const std::string& html) {
  const std::vector<int> ids = tokenizer.encode(text, "--text", Unknown::kReplace, nullptr);
  const int T = static_cast<int>(ids.size());
  if (T < 2 || T > model.window())
    throw Error("--text must hold 2 to " + std::to_string(model.window()) + " words (the model's window), got " +
                std::to_string(T));
  if (!model.attends())
    throw Error(weights_file + ": attention none is the plain bigram: it has no weights on earlier words");
  std::vector<int> targets(ids.begin() + 1, ids.end());
  targets.push_back(-1);
  model.attend(ids.data(), targets.data(), T);
  const float* weights = model.attention_weights();
  const float* losses = model.losses();
  std::fprintf(stderr, "checkpoint: %s\n", choice.c_str());
  // One line per predicted word: the previous word, the word, its probability, then the
  // earlier words by weight.
  std::printf("attention %s; for each word: the previous word, p(word), and the weights on the earlier words\n",
              model.scoring().c_str());
  for (int t = 1; t < T; ++t) {  // row 0 has no earlier word
    const int next = targets[size_t(t)];
    std::string line = "after «";  // appended piece by piece: g++ 12 warns falsely (-Wrestrict) on "..." + string
    line.append(cell(tokenizer, ids[size_t(t)])).append("»");
    if (next >= 0) {
      char p[64];
      std::snprintf(p, sizeof p, " → «%s» p=%.3f:", cell(tokenizer, next).c_str(), std::exp(-losses[t]));
      line += p;
    } else {
      line += " (the next word):";
    }
    std::vector<int> order(static_cast<size_t>(t));
    for (int k = 0; k < t; ++k) order[size_t(k)] = k;
    const float* w = weights + size_t(t) * T;
    std::stable_sort(order.begin(), order.end(), [&](int i, int j) { return w[i] > w[j]; });
    for (int k : order) {
      char entry[32];
      std::snprintf(entry, sizeof entry, "%.3f", w[k]);
      line.append(" ").append(cell(tokenizer, ids[size_t(k)])).append("(").append(std::to_string(k)).append(")=").append(entry);
    }
    std::printf("%s\n", line.c_str());
  }
  if (!html.empty()) {
    write_file_atomic(html, bow_attention_html(tokenizer, ids, weights, model.scoring()));
    std::printf("wrote %s\n", html.c_str());
  }
  return 0;
}

}  // namespace potop::cli
