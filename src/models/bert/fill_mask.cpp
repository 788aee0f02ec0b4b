#include "models/bert/fill_mask.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "nn/model.h"

namespace potop {

namespace {

void append_text(std::vector<int>& ids, const Tokenizer& tokenizer, std::string_view text) {
  if (text.empty()) return;
  const std::vector<int> piece = tokenizer.encode(text, "the prompt");
  ids.insert(ids.end(), piece.begin(), piece.end());
}

// The prompt (ids: [CLS] ... [SEP]) with `fill` at masks[m] and the other masks as the text
// "[MASK]". A vocabulary that holds [MASK] (an imported BERT's WordPiece) decodes the whole row at
// once, as Hugging Face's fill-mask pipeline does: its decoder joins the words. Otherwise the
// pieces between the masks are decoded one by one around the fill.
std::string filled_text(const Tokenizer& tokenizer, const std::vector<int>& ids, const std::vector<int>& masks,
                        size_t m, int fill, bool mask_in_vocab, std::string_view prompt) {
  if (mask_in_vocab) {
    std::vector<int> row(ids.begin() + 1, ids.end() - 1);
    row[size_t(masks[m] - 1)] = fill;
    return tokenizer.decode(row);
  }
  std::string text;
  size_t from = 1;
  for (size_t j = 0; j < masks.size(); ++j) {
    const int p = masks[j];
    text += tokenizer.decode({ids.data() + from, size_t(p) - from});
    if (j == m) text += tokenizer.decode(std::vector<int>{fill});
    else {
      if (is_sentencepiece(tokenizer)) text += ' ';
      text += kMaskText;
    }
    from = size_t(p) + 1;
  }
  text += tokenizer.decode({ids.data() + from, ids.size() - 1 - from});
  // A SentencePiece piece decoded alone keeps its leading space: the prompt's first word has none.
  if (!text.empty() && text.front() == ' ' && !prompt.empty() && prompt.front() != ' ') text.erase(0, 1);
  return text;
}

}  // namespace

std::vector<int> bert_input_ids(const Tokenizer& tokenizer, const BertConfig& config, std::string_view prompt,
                                std::vector<int>& mask_positions) {
  const BertSpecials s = bert_specials(config, tokenizer);
  std::vector<int> ids{s.cls};
  mask_positions.clear();
  size_t at = 0;
  for (size_t next; (next = prompt.find(kMaskText, at)) != std::string_view::npos; at = next + kMaskText.size()) {
    std::string_view before = prompt.substr(at, next - at);
    // "Pan [MASK]": SentencePiece writes the space as the next word's "▁", which is the mask's.
    if (is_sentencepiece(tokenizer))
      while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
    append_text(ids, tokenizer, before);
    mask_positions.push_back(static_cast<int>(ids.size()));
    ids.push_back(s.mask);
  }
  append_text(ids, tokenizer, prompt.substr(at));
  ids.push_back(s.sep);
  if (static_cast<int>(ids.size()) > config.block_size)
    throw Error("the prompt is " + std::to_string(ids.size()) + " tokens with [CLS] and [SEP], longer than the model's "
                "block of " + std::to_string(config.block_size) + "; shorten it");
  return ids;
}

std::vector<std::vector<FillCandidate>> Bert::fill_mask(const Tokenizer& tokenizer, std::string_view prompt,
                                                        int top_k) {
  const BertConfig& config = this->config();
  if (prompt.find(kMaskText) == std::string_view::npos)
    throw Error("the prompt has no " + std::string(kMaskText) + " to fill: write it where a word is missing, as in "
                "\"Pan [MASK] rzekł\"");
  std::vector<int> masks;
  const std::vector<int> ids = bert_input_ids(tokenizer, config, prompt, masks);
  const int T = static_cast<int>(ids.size()), V = config.vocab_size;
  const BertSpecials s = bert_specials(config, tokenizer);
  // The candidates: the tokenizer's ordinary tokens (never a special one, nor [MASK]).
  std::vector<int> candidates;
  for (int v = s.first_ordinary; v < tokenizer.size(); ++v)
    if (!s.special(v)) candidates.push_back(v);
  if (candidates.empty()) throw Error("the " + tokenizer.kind() + " tokenizer has no ordinary token to fill in [MASK] with");
  // Every mask is a target, so the head scores exactly those rows; the target's value is unused.
  std::vector<int> targets(ids.size(), -1);
  for (const int p : masks) targets[size_t(p)] = 0;
  const int length = T;
  Batch batch{{1, T}, ids.data(), targets.data()};
  batch.lengths = &length;
  forward(batch, {/*training=*/false, 0});
  const float* logits = this->logits();
  std::vector<std::vector<FillCandidate>> out;
  for (size_t m = 0; m < masks.size(); ++m) {
    const float* l = logits + m * V;
    // softmax over the candidates
    float top = l[candidates[0]];
    for (const int v : candidates) top = std::max(top, l[v]);
    double z = 0;
    for (const int v : candidates) z += std::exp(double(l[v]) - top);
    std::vector<int> order = candidates;
    const int k = std::min<int>(top_k, int(order.size()));
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) { return l[a] > l[b]; });
    std::vector<FillCandidate> fills;
    for (int i = 0; i < k; ++i) {
      FillCandidate c;
      c.id = order[size_t(i)];
      c.token = tokenizer.decode_one(c.id);
      c.piece = tokenizer.piece(c.id);
      c.probability = std::exp(double(l[c.id]) - top) / z;
      c.sequence = filled_text(tokenizer, ids, masks, m, c.id, s.mask < tokenizer.size(), prompt);
      fills.push_back(std::move(c));
    }
    out.push_back(std::move(fills));
  }
  return out;
}

}  // namespace potop
