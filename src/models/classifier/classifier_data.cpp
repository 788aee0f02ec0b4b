#include "models/classifier/classifier_data.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace potop {

EncodedTexts encode_texts(const ClassifierConfig& config, const Tokenizer& tokenizer,
                          const std::vector<std::string>& texts, const std::string& what) {
  EncodedTexts out;
  out.rows.reserve(texts.size());
  const int wrap = config.cls_sep ? 2 : 0;
  const size_t room = size_t(config.body.block_size - wrap);
  for (size_t i = 0; i < texts.size(); ++i) {
    UnknownReport unknown;
    std::vector<int> ids = tokenizer.encode(texts[i], what, Unknown::kReplace, &unknown);
    for (const UnknownReport::Item& item : unknown.items)
      for (long n = 0; n < item.count; ++n) out.unknown.add(item.c, long(i) + 1, item.word);
    if (ids.empty()) throw Error(what + ": text " + std::to_string(i + 1) + " gives no token");
    if (ids.size() > room) ids.resize(room), ++out.truncated;
    if (config.cls_sep) {
      ids.insert(ids.begin(), tokenizer.specials().bos);  // [CLS]
      ids.push_back(tokenizer.specials().eos);            // [SEP]
    }
    out.rows.push_back(std::move(ids));
  }
  return out;
}

Batch RowBatch::fill(const std::vector<std::vector<int>>& rows, const int* classes, const int* indices, int count) {
  int T = 1;
  for (int i = 0; i < count; ++i) T = std::max(T, int(rows[size_t(indices[i])].size()));
  tokens_.assign(size_t(count) * T, kPadId);
  lengths_.resize(size_t(count));
  labels_.resize(size_t(count));
  for (int i = 0; i < count; ++i) {
    const std::vector<int>& row = rows[size_t(indices[i])];
    std::copy(row.begin(), row.end(), tokens_.begin() + long(i) * T);
    lengths_[size_t(i)] = int(row.size());
    if (classes) labels_[size_t(i)] = classes[indices[i]];
  }
  Batch b;
  b.B = count, b.T = T;
  b.tokens = tokens_.data(), b.lengths = lengths_.data();
  b.labels = classes ? labels_.data() : nullptr;
  return b;
}

EpochBatches::EpochBatches(const std::vector<std::vector<int>>& rows, const std::vector<int>& classes, int B,
                           uint64_t seed)
    : rows_(rows), classes_(classes), B_(B), seed_(seed), per_epoch_((long(rows.size()) + B - 1) / B) {}

Batch EpochBatches::at(long index) {
  const long epoch = index / per_epoch_, k = index % per_epoch_;
  if (epoch != epoch_) {  // Fisher-Yates with the epoch's own generator
    order_.resize(rows_.size());
    std::iota(order_.begin(), order_.end(), 0);
    Rng(hash64(seed_, uint64_t(epoch))).shuffle(order_);
    epoch_ = epoch;
  }
  const long first = k * B_;
  const int count = int(std::min<long>(B_, long(rows_.size()) - first));
  return batch_.fill(rows_, classes_.data(), order_.data() + first, count);
}

std::optional<RowScores> score_rows(Classifier& model, const std::vector<std::vector<int>>& rows,
                                    const std::vector<int>& classes, const std::vector<int>& indices, int B,
                                    const std::function<bool()>& stop) {
  RowScores out;
  RowBatch batch;
  const int K = model.config().n_classes();
  for (size_t first = 0; first < indices.size(); first += size_t(B)) {
    if (stop()) return std::nullopt;
    const int count = int(std::min(indices.size() - first, size_t(B)));
    out.loss += double(model.forward(batch.fill(rows, classes.data(), indices.data() + first, count), Pass{})) * count;
    for (int i = 0; i < count; ++i) {
      const float* z = model.logits() + size_t(i) * K;
      out.predicted.push_back(int(std::max_element(z, z + K) - z));
    }
  }
  out.loss /= double(std::max<size_t>(1, indices.size()));
  return out;
}

ClassificationScores score_predictions(const std::vector<int>& truth, const std::vector<int>& predicted, int classes) {
  POTOP_CHECK(truth.size() == predicted.size() && classes > 0, "score_predictions: sizes differ");
  ClassificationScores s;
  const size_t K = size_t(classes);
  s.confusion.assign(K, std::vector<long>(K, 0));
  for (size_t i = 0; i < truth.size(); ++i) ++s.confusion[size_t(truth[i])][size_t(predicted[i])];
  s.examples = long(truth.size());
  s.precision.assign(K, 0), s.recall.assign(K, 0), s.f1.assign(K, 0), s.support.assign(K, 0);
  int present = 0;  // classes in the truth or the predictions: those macro-F1 averages over
  for (size_t k = 0; k < K; ++k) {
    long predicted_k = 0;
    for (size_t j = 0; j < K; ++j) s.support[k] += s.confusion[k][j], predicted_k += s.confusion[j][k];
    const long tp = s.confusion[k][k];
    s.correct += tp;
    s.precision[k] = predicted_k ? double(tp) / predicted_k : 0.0;
    s.recall[k] = s.support[k] ? double(tp) / s.support[k] : 0.0;
    const double pr = s.precision[k] + s.recall[k];
    s.f1[k] = pr > 0 ? 2 * s.precision[k] * s.recall[k] / pr : 0.0;
    if (s.support[k] + predicted_k > 0) s.macro_f1 += s.f1[k], ++present;
  }
  s.macro_f1 = present ? s.macro_f1 / double(present) : 0.0;
  s.accuracy = s.examples ? double(s.correct) / s.examples : 0.0;
  return s;
}

std::vector<float> class_probabilities(Classifier& model, const std::vector<std::vector<int>>& rows) {
  const int K = model.config().n_classes(), B = 32;
  std::vector<float> p(rows.size() * size_t(K));
  RowBatch batch;
  std::vector<int> index;
  for (size_t first = 0; first < rows.size(); first += B) {
    const int count = int(std::min(rows.size() - first, size_t(B)));
    index.resize(size_t(count));
    std::iota(index.begin(), index.end(), int(first));
    model.forward(batch.fill(rows, nullptr, index.data(), count), Pass{});
    const float* logits = model.logits();
    for (int i = 0; i < count; ++i) {  // softmax
      const float* z = logits + size_t(i) * K;
      float* out = p.data() + (first + size_t(i)) * K;
      const float top = *std::max_element(z, z + K);
      double sum = 0;
      for (int k = 0; k < K; ++k) sum += out[k] = std::exp(z[k] - top);
      for (int k = 0; k < K; ++k) out[k] = float(out[k] / sum);
    }
  }
  return p;
}

}  // namespace potop
