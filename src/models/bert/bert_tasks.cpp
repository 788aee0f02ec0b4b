// What a BERT does besides training (nn/tasks.h): embeds texts and shows its self-attention, on
// the row [CLS] text [SEP] (fill_mask.cpp fills in [MASK]).
#include <cmath>

#include "core/error.h"
#include "models/bert/bert.h"
#include "models/bert/fill_mask.h"
#include "report/attention_map.h"

namespace potop {

std::vector<float> Bert::embed(const Tokenizer& tokenizer, const std::string& text, const std::string& field,
                               int* tokens) {
  const BertConfig& c = config();
  if (text.empty()) throw Error(field + " is empty");
  const BertSpecials s = bert_specials(c, tokenizer);
  std::vector<int> ids{s.cls};
  const std::vector<int> words = tokenizer.encode(text, field, Unknown::kReplace, nullptr);
  ids.insert(ids.end(), words.begin(), words.end());
  ids.push_back(s.sep);
  const int T = static_cast<int>(ids.size());
  if (T > c.block_size)
    throw Error(field + " is " + std::to_string(T) + " tokens with [CLS] and [SEP], " +
                "longer than the model's block of " + std::to_string(c.block_size));
  if (tokens) *tokens = T;
  Batch batch{{1, T}, ids.data(), nullptr};
  batch.lengths = &T;
  forward(batch, Pass{});
  const float* h = hidden();  // (T, C)
  std::vector<float> v(size_t(c.n_embd), 0.0f);
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < c.n_embd; ++k) v[size_t(k)] += h[size_t(t) * c.n_embd + k];
  double norm = 0;
  for (float x : v) norm += double(x) * x;
  const float scale = norm > 0 ? float(1 / std::sqrt(norm)) : 0.0f;
  for (float& x : v) x *= scale;
  return v;
}

AttentionRow Bert::attention_row(const Tokenizer& tokenizer, const std::string& text, const std::string&) const {
  AttentionRow row;
  std::vector<int> masks;
  row.ids = bert_input_ids(tokenizer, config(), text, masks);
  row.focus = masks.empty() ? 0 : masks[0];
  return row;
}

void Bert::attend(const std::vector<int>& ids) {
  attended_length_ = int(ids.size());  // attention(l) reads the lengths of the last forward
  Batch batch{{1, attended_length_}, ids.data(), nullptr};
  batch.lengths = &attended_length_;
  forward(batch, Pass{});
}

std::string Bert::axis_label(const Tokenizer& tokenizer, int id) const {
  const BertSpecials s = bert_specials(config(), tokenizer);
  if (id == s.cls) return "[CLS]";  // [CLS] and [SEP] decode to nothing: named as BERT does
  if (id == s.sep) return "[SEP]";
  return id == s.mask ? std::string(kMaskText) : token_label(tokenizer, id);
}

}  // namespace potop
