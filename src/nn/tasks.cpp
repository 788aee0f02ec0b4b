#include "nn/tasks.h"

namespace potop {

std::string to_string(Task task) {
  switch (task) {
    case Task::kLanguageModel: return "language-model";
    case Task::kCausalLM: return "causal-lm";
    case Task::kSelfAttention: return "self-attention";
    case Task::kMaskedLM: return "masked-lm";
    case Task::kTextEncoder: return "text-encoder";
    case Task::kSequenceClassifier: return "sequence-classifier";
    case Task::kSeq2Seq: return "seq2seq";
    case Task::kWordAttention: return "word-attention";
  }
  return "?";
}

}  // namespace potop
