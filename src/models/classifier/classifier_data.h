// A classifier's inputs: texts as token rows the way the model was trained on them, batches of
// them, and the scores of its predictions.
//
// A row is [CLS] tokens [SEP] (<bos> ... <eos>) for a bidirectional body whose tokenizer has
// them, else the text's tokens (GPT-1 appends an extract token; the last real token plays its
// part here). Texts longer than the block are cut to fit (run_glue.py's truncation).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "data/batch.h"
#include "models/classifier/classifier.h"
#include "models/classifier/classifier_config.h"
#include "tokenizer/tokenizer.h"

namespace potop {

struct EncodedTexts {
  std::vector<std::vector<int>> rows;
  long truncated = 0;      // texts cut to the block size
  UnknownReport unknown;   // what the vocabulary lacked (replaced by <unk>, or a char model's stand-in)
};

// The rows of `texts` (what: a file name, for messages). A text that encodes to no token is an
// Error naming `what` and the text's number.
EncodedTexts encode_texts(const ClassifierConfig& config, const Tokenizer& tokenizer,
                          const std::vector<std::string>& texts, const std::string& what);

// A token as the table and the page show it: [CLS] and [SEP] by name, whitespace visible
// (classifier_tasks.cpp).
std::string classifier_token_text(const ClassifierConfig& config, const Tokenizer& tokenizer, int id);

// Fills a batch of the given rows (indices into `rows`), padded with <pad> (id 0) to the
// longest; labels null: none. The arrays live in this object until the next fill.
class RowBatch {
 public:
  Batch fill(const std::vector<std::vector<int>>& rows, const int* classes, const int* indices, int count);

 private:
  std::vector<int> tokens_, lengths_, labels_;
};

// Training batches as a function of the micro-batch index alone (so a resumed run draws what an
// uninterrupted one would): epoch e is a shuffle of the examples drawn from (seed, e), cut into
// batches of B (the last one of an epoch may be shorter).
class EpochBatches {
 public:
  EpochBatches(const std::vector<std::vector<int>>& rows, const std::vector<int>& classes, int B, uint64_t seed);
  long per_epoch() const { return per_epoch_; }
  Batch at(long index);

 private:
  const std::vector<std::vector<int>>& rows_;
  const std::vector<int>& classes_;
  int B_;
  uint64_t seed_;
  long per_epoch_;
  long epoch_ = -1;
  std::vector<int> order_;
  RowBatch batch_;
};

// The mean loss over the rows `indices` names and the class the model predicts for each, in
// batches of B rows without dropout; nullopt when stop() turns true between batches.
struct RowScores {
  double loss = 0;
  std::vector<int> predicted;
};
std::optional<RowScores> score_rows(Classifier& model, const std::vector<std::vector<int>>& rows,
                                    const std::vector<int>& classes, const std::vector<int>& indices, int B,
                                    const std::function<bool()>& stop);

// Class probabilities (rows, K), row-major, of token rows (encode_texts), in batches of 32 without
// dropout: the softmax of the model's logits.
std::vector<float> class_probabilities(Classifier& model, const std::vector<std::vector<int>>& rows);

// The scores of predictions against the truth: accuracy, per-class precision, recall and F1,
// macro-F1 (their unweighted mean over the classes that occur in the truth or the predictions,
// as scikit-learn's average="macro"; a class never predicted has precision 0), and the confusion matrix (row: the true class, column: the predicted one).
struct ClassificationScores {
  long examples = 0, correct = 0;
  double accuracy = 0, macro_f1 = 0;
  std::vector<double> precision, recall, f1;
  std::vector<long> support;                 // examples of each true class
  std::vector<std::vector<long>> confusion;  // [true][predicted]
};
ClassificationScores score_predictions(const std::vector<int>& truth, const std::vector<int>& predicted, int classes);

}  // namespace potop
