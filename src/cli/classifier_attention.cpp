#include "cli/classifier_attention.h"

#include "models/classifier/classifier_data.h"

namespace potop::cli {

std::string classifier_token_text(const ClassifierConfig& c, const Tokenizer& tokenizer, int id) {
  if (c.cls_sep && id == kBosId) return "[CLS]";
  if (c.cls_sep && id == kEosId) return "[SEP]";
  return token_label(tokenizer, id);
}

ClassifierMaps classifier_attention_maps(LoadedClassifier& m, const std::string& text) {
  const ClassifierConfig& c = m.config;
  EncodedTexts encoded = encode_texts(c, *m.tokenizer, {text}, "the text");
  ClassifierMaps out;
  out.ids = std::move(encoded.rows[0]);
  out.truncated = encoded.truncated > 0;
  Classifier* model = m.model.get();
  const Tokenizer* tokenizer = m.tokenizer.get();
  out.maps = SelfAttentionMaps{
      c.body.n_layer, c.body.n_head, c.body.block_size, c.causal,
      [model](const std::vector<int>& ids) {
        const int T = int(ids.size());
        Batch batch;
        batch.B = 1, batch.T = T, batch.tokens = ids.data(), batch.lengths = &T;
        model->forward(batch, Pass{});
      },
      [model](int l) { return model->attention(l); },
      [c, tokenizer](int id) { return classifier_token_text(c, *tokenizer, id); }};
  return out;
}

}  // namespace potop::cli
