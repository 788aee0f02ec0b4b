#include "report/encoder_attention.h"

#include <memory>

#include "models/bert/fill_mask.h"
#include "models/classifier/classifier_data.h"

namespace potop {

std::string classifier_token_text(const ClassifierConfig& c, const Tokenizer& tokenizer, int id) {
  if (c.cls_sep && id == kBosId) return "[CLS]";
  if (c.cls_sep && id == kEosId) return "[SEP]";
  return token_label(tokenizer, id);
}

EncoderMaps classifier_attention_maps(LoadedClassifier& m, const std::string& text) {
  const ClassifierConfig& c = m.config;
  EncodedTexts encoded = encode_texts(c, *m.tokenizer, {text}, "the text");
  EncoderMaps out;
  out.ids = std::move(encoded.rows[0]);
  out.truncated = encoded.truncated > 0;
  out.focus = c.pooling == Pooling::kLast ? int(out.ids.size()) - 1 : 0;
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

EncoderMaps bert_attention_maps(LoadedBert& m, const std::string& text) {
  EncoderMaps out;
  std::vector<int> masks;
  out.ids = bert_input_ids(*m.tokenizer, m.config, text, masks);
  out.focus = masks.empty() ? 0 : masks[0];
  Bert* bert = m.model.get();
  const Tokenizer* tokenizer = m.tokenizer.get();
  const int mask = mask_id(m.config);
  // Bert::attention(l) reads the lengths of the last forward: they live as long as the maps.
  auto length = std::make_shared<int>(0);
  out.maps = SelfAttentionMaps{
      m.config.n_layer, m.config.n_head, m.config.block_size, /*causal=*/false,
      [bert, length](const std::vector<int>& x) {
        *length = int(x.size());
        Batch batch{{1, *length}, x.data(), nullptr};
        batch.lengths = length.get();
        bert->forward(batch, Pass{});
      },
      [bert](int l) { return bert->attention(l); },
      [tokenizer, mask](int id) {  // [CLS] and [SEP] decode to nothing: named as BERT does
        if (id == kBosId) return std::string("[CLS]");
        if (id == kEosId) return std::string("[SEP]");
        return id == mask ? std::string(kMaskText) : token_label(*tokenizer, id);
      }};
  return out;
}

}  // namespace potop
