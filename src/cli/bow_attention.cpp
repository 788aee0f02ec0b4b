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

int print_bow_attention(LoadedBow& m, const std::string& text, const std::string& html) {
  const std::vector<int> ids = m.tokenizer->encode(text, "--text", Unknown::kReplace, nullptr);
  const int T = static_cast<int>(ids.size());
  if (T < 2 || T > m.config.block_size)
    throw Error("--text must hold 2 to " + std::to_string(m.config.block_size) + " words (the model's window), got " +
                std::to_string(T));
  if (!m.config.has_bag())
    throw Error(m.weights.string() + ": attention none is the plain bigram: it has no weights on earlier words");
  std::vector<int> targets(ids.begin() + 1, ids.end());
  targets.push_back(-1);
  m.model->forward(Batch{{1, T}, ids.data(), targets.data()}, Pass{});
  const float* weights = m.model->attention_weights();
  const float* losses = m.model->losses();
  std::fprintf(stderr, "checkpoint: %s\n", m.choice.c_str());
  // One line per predicted word: the previous word, the word, its probability, then the
  // earlier words by weight.
  std::printf("attention %s; for each word: the previous word, p(word), and the weights on the earlier words\n",
              to_string(m.config.attention).c_str());
  for (int t = 1; t < T; ++t) {  // row 0 has no earlier word
    const int next = targets[size_t(t)];
    std::string line = "after «";  // appended piece by piece: g++ 12 warns falsely (-Wrestrict) on "..." + string
    line.append(cell(*m.tokenizer, ids[size_t(t)])).append("»");
    if (next >= 0) {
      char p[64];
      std::snprintf(p, sizeof p, " → «%s» p=%.3f:", cell(*m.tokenizer, next).c_str(), std::exp(-losses[t]));
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
      line.append(" ").append(cell(*m.tokenizer, ids[size_t(k)])).append("(").append(std::to_string(k)).append(")=").append(entry);
    }
    std::printf("%s\n", line.c_str());
  }
  if (!html.empty()) {
    write_file_atomic(html, bow_attention_html(*m.tokenizer, ids, weights, to_string(m.config.attention)));
    std::printf("wrote %s\n", html.c_str());
  }
  return 0;
}

}  // namespace potop::cli
