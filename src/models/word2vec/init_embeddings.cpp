#include "models/word2vec/init_embeddings.h"

#include <cmath>
#include <unordered_map>
#include <vector>

#include "core/error.h"

namespace potop {

EmbeddingInit init_embeddings(float* wte, int vocab, int n_embd, const WordTokenizer& tokenizer,
                              const KeyedVectors& vectors, const std::string& source) {
  if (vectors.dim != n_embd)
    throw Error("--init-embeddings " + source + ": the vectors have dimension " + std::to_string(vectors.dim) +
                ", the model's n_embd is " + std::to_string(n_embd) + " (train them with --dim " +
                std::to_string(n_embd) + " or set --n-embd " + std::to_string(vectors.dim) + ")");
  std::unordered_map<std::string, int> index;
  for (int i = vectors.size() - 1; i >= 0; --i) index[vectors.words[static_cast<size_t>(i)]] = i;
  std::vector<int> row_of(static_cast<size_t>(vocab), -1);  // token -> vector row
  EmbeddingInit r;
  double init_sq = 0, vec_sq = 0;
  for (int t = 0; t < vocab; ++t) {
    const std::string word = tokenizer.decode_one(t);
    auto it = index.find(word);
    if (it == index.end()) it = index.find(lowercase_text(word));
    const float* row = wte + static_cast<size_t>(t) * n_embd;
    for (int i = 0; i < n_embd; ++i) init_sq += static_cast<double>(row[i]) * row[i];
    if (t < 4 || it == index.end()) continue;  // the specials are never words
    row_of[static_cast<size_t>(t)] = it->second;
    const float* v = vectors.row(it->second);
    for (int i = 0; i < n_embd; ++i) vec_sq += static_cast<double>(v[i]) * v[i];
    ++r.copied;
  }
  r.kept = vocab - r.copied;
  if (r.copied == 0)
    throw Error("--init-embeddings " + source + ": none of the tokenizer's " + std::to_string(vocab) +
                " tokens is a word of the vectors (another language or splitting?)");
  const double init_rms = std::sqrt(init_sq / (static_cast<double>(vocab) * n_embd));
  const double vec_rms = std::sqrt(vec_sq / (static_cast<double>(r.copied) * n_embd));
  r.scale = vec_rms > 0 ? init_rms / vec_rms : 1.0;
  for (int t = 0; t < vocab; ++t) {
    const int src = row_of[static_cast<size_t>(t)];
    if (src < 0) continue;
    const float* v = vectors.row(src);
    float* row = wte + static_cast<size_t>(t) * n_embd;
    for (int i = 0; i < n_embd; ++i) row[i] = static_cast<float>(v[i] * r.scale);
  }
  return r;
}

}  // namespace potop
