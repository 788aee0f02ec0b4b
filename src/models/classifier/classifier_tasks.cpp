// What a classifier does besides training (nn/tasks.h): labels texts and shows its
// self-attention, each text encoded as in training (encode_texts: [CLS] text [SEP] or the text's
// tokens, cut to the block).
#include "models/classifier/classifier.h"
#include "models/classifier/classifier_data.h"
#include "report/attention_map.h"

namespace potop {

std::string Classifier::pooling() const {
  const Pooling p = config().pooling;
  return p == Pooling::kCls ? "cls" : p == Pooling::kLast ? "last" : "mean";
}

Classified Classifier::classify(const Tokenizer& tokenizer, const std::vector<std::string>& texts,
                                const std::string& field) {
  EncodedTexts encoded = encode_texts(config(), tokenizer, texts, field);
  Classified out;
  out.probabilities = class_probabilities(*this, encoded.rows);
  for (const std::vector<int>& row : encoded.rows) out.tokens.push_back(int(row.size()));
  out.truncated = encoded.truncated;
  return out;
}

AttentionRow Classifier::attention_row(const Tokenizer& tokenizer, const std::string& text, const std::string&) const {
  EncodedTexts encoded = encode_texts(config(), tokenizer, {text}, "the text");
  AttentionRow row;
  row.ids = std::move(encoded.rows[0]);
  row.truncated = encoded.truncated > 0;
  row.focus = config().pooling == Pooling::kLast ? int(row.ids.size()) - 1 : 0;
  return row;
}

void Classifier::attend(const std::vector<int>& ids) {
  attended_length_ = int(ids.size());
  Batch batch;
  batch.B = 1, batch.T = attended_length_, batch.tokens = ids.data(), batch.lengths = &attended_length_;
  forward(batch, Pass{});
}

std::string Classifier::axis_label(const Tokenizer& tokenizer, int id) const {
  return classifier_token_text(config(), tokenizer, id);
}

std::string classifier_token_text(const ClassifierConfig& c, const Tokenizer& tokenizer, int id) {
  if (c.cls_sep && id == tokenizer.specials().bos) return "[CLS]";
  if (c.cls_sep && id == tokenizer.specials().eos) return "[SEP]";
  return token_label(tokenizer, id);
}

}  // namespace potop
