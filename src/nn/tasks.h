// What a trained model can do, each an interface a model class implements beside the training
// contract (model.h), so that the commands that use models (generate, serve, eval, attention,
// export) ask a model what it can do and never which kind it is, as Hugging Face's
// AutoModelFor<Task> classes and llama.cpp's capability questions do:
//
//   (language model)    its loss on a Batch is the next token's             a GPT, the bag-of-words LM
//   CausalLM            logits of the next token for rows with KV caches    a GPT
//   SelfAttention       the maps of its self-attention on a text            a GPT, a BERT, a classifier
//   MaskedLM            the likeliest tokens in each [MASK] of a text       a BERT
//   TextEncoder         one vector per text                                 a BERT
//   SequenceClassifier  class probabilities of texts                        a classifier
//   Seq2Seq             a target sequence for a source; cross-attention     the encoder-decoder
//   WordAttention       its weights on the earlier words of a text          the bag-of-words LM
//
// A loaded model offers a task when its class implements the interface: task<T>(model) is the
// interface or null. The row of each kind in the table (nn/model_kind.h) lists its tasks, so
// that `potop info` says what a model can do without loading its weights.
//
// The text-level tasks take the tokenizer the model was trained with (a model does not own it),
// and turn text into the row they read themselves: a BERT puts [CLS] and [SEP] around it, a
// classifier encodes as it was trained. Errors about a text are potop::Error; `field` is how the
// caller names the text ("--prompt", "input[2]"), used where the model's own messages do not
// already say (a BERT's and a classifier's rows name "the prompt" and "the text", as before).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nn/kv_cache.h"
#include "nn/model.h"
#include "tokenizer/tokenizer.h"

namespace potop {

// The tasks, as the table of kinds lists them and `potop info` names them.
enum class Task { kLanguageModel, kCausalLM, kSelfAttention, kMaskedLM, kTextEncoder, kSequenceClassifier, kSeq2Seq, kWordAttention };
// "causal-lm", "self-attention", ...
std::string to_string(Task task);

// The interface T of a model, or null when its class does not implement it.
template <class T>
T* task(Model& model) {
  return dynamic_cast<T*>(&model);
}
template <class T>
const T* task(const Model& model) {
  return dynamic_cast<const T*>(&model);
}

// Which logits a cached forward pass gives: every position's, or only the last one's, which is
// all that reading a prompt needs to sample the next token (for GPT-2's 50257 tokens the output
// layer costs a third of the prompt's FLOPs and (T, V) floats of fresh memory).
enum class LogitRows { kAll, kLast };

// A causal language model: what generation, sampling, completions (chat, responses), scoring a
// prompt and quantized decoding need. Its loss on a Batch (model.h) is the next-token loss.
class CausalLM {
 public:
  virtual ~CausalLM() = default;
  virtual int vocab_size() const = 0;
  virtual int context_length() const = 0;  // the most positions a KV cache holds
  // A new, empty cache for generation, of kv_cache_type().
  virtual KVCache new_cache() const = 0;
  // tokens (1, T) continue the sequence whose keys and values the cache holds (cache.length
  // positions) and are appended to it. No dropout, no loss; logits() are (T, V), or (1, V) for
  // the last position with LogitRows::kLast.
  virtual void forward(const int* tokens, int T, KVCache& cache, LogitRows rows) = 0;
  // B independent sequences take one token each, tokens[b] continuing *caches[b], in one forward
  // pass; logits() are (B, V), row b as forward(&tokens[b], 1, *caches[b]) would give it.
  virtual void forward_rows(const int* tokens, int B, KVCache* const* caches) = 0;
  virtual const float* logits() const = 0;

  // What new_cache() stores keys and values as: f32 (decoding gives a full forward pass's
  // logits) unless a command asks for f16 (sample and serve's --kv-cache).
  void set_kv_cache_type(KVCacheType type) { kv_cache_type_ = type; }
  KVCacheType kv_cache_type() const { return kv_cache_type_; }

 private:
  KVCacheType kv_cache_type_ = KVCacheType::kF32;
};

// The row a model reads for a text, for its attention maps.
struct AttentionRow {
  std::vector<int> ids;
  bool truncated = false;  // the text was cut to the model's block
  int focus = 0;           // the query position whose output the model uses (a classifier's [CLS], a BERT's [MASK])
};

// Self-attention a person can look at: every layer's and head's weights on one text.
class SelfAttention {
 public:
  virtual ~SelfAttention() = default;
  virtual int attention_layers() const = 0;
  virtual int attention_heads() const = 0;
  // Key/value heads: grouped-query attention lets consecutive query heads share one (query head h
  // reads key/value head h / (heads / kv_heads)); multi-head attention has one per query head.
  virtual int kv_heads() const { return attention_heads(); }
  virtual int context_length() const = 0;
  virtual bool causal() const = 0;  // a decoder's (no weight on later tokens) or an encoder's
  // The row for a text (the model's special tokens around the text's); field names the text.
  virtual AttentionRow attention_row(const Tokenizer& tokenizer, const std::string& text,
                                     const std::string& field) const = 0;
  // One forward pass over the row, then attention(l): layer l's probabilities (H, T, T), valid
  // until the next call.
  virtual void attend(const std::vector<int>& ids) = 0;
  virtual const float* attention(int layer) = 0;
  // How a token is shown on an axis ([CLS] by name; whitespace visible).
  virtual std::string axis_label(const Tokenizer& tokenizer, int id) const = 0;
};

// One guess for a [MASK].
struct FillCandidate {
  int id = 0;
  std::string token;     // the token's text (decode_one)
  std::string piece;     // its name (Tokenizer::piece)
  double probability = 0;
  std::string sequence;  // the prompt with this token in the mask's place (the other masks kept)
};

// A masked language model: the likeliest tokens in each "[MASK]" of a text.
class MaskedLM {
 public:
  virtual ~MaskedLM() = default;
  // For each [MASK] of the text (one at least, or an Error), in order, the top_k fills.
  virtual std::vector<std::vector<FillCandidate>> fill_mask(const Tokenizer& tokenizer, std::string_view text,
                                                            int top_k) = 0;
};

// A text encoder: one vector per text, of length 1, so that a dot product is the cosine.
class TextEncoder {
 public:
  virtual ~TextEncoder() = default;
  virtual int embedding_size() const = 0;
  // The text's vector; tokens (when given) gets the length of the row it read. field names the
  // text in errors.
  virtual std::vector<float> embed(const Tokenizer& tokenizer, const std::string& text, const std::string& field,
                                   int* tokens = nullptr) = 0;
};

// Texts labelled: class probabilities.
struct Classified {
  std::vector<float> probabilities;  // (texts, classes), row-major
  std::vector<int> tokens;           // the length of each text's row
  long truncated = 0;                // texts cut to the model's block
};
class SequenceClassifier {
 public:
  virtual ~SequenceClassifier() = default;
  virtual const std::vector<std::string>& labels() const = 0;
  virtual std::string pooling() const = 0;  // what the head reads: "cls", "last" or "mean"
  // field names the texts in errors.
  virtual Classified classify(const Tokenizer& tokenizer, const std::vector<std::string>& texts,
                              const std::string& field) = 0;
};

// How a sequence-to-sequence model searches for its output.
struct DecodeOptions {
  int beam = 1;         // 1: greedy
  float alpha = 0.6f;   // length penalty exponent (GNMT)
  int max_extra = 16;   // at most |source| + max_extra target tokens (and block_size - 1)
  // Beam search advances its K hypotheses in one decoder pass of K rows (each with its own KV
  // cache); false: one pass per hypothesis, the reference the batched pass is tested against.
  bool batched = true;
};

// A sequence-to-sequence model (translation, T5's span filling): target ids for source ids, and
// the decoder's cross-attention on the source.
class Seq2Seq {
 public:
  virtual ~Seq2Seq() = default;
  virtual int context_length() const = 0;  // the most source (and target) positions
  virtual int attention_layers() const = 0;
  virtual int attention_heads() const = 0;
  // The target ids (without <s> and </s>) for source ids (ending in </s>).
  virtual std::vector<int> translate(std::span<const int> source, const DecodeOptions& options) = 0;
  // One teacher-forced pass of target (starting with <s>) given source; then
  // cross_attention(l): decoder layer l's weights on the source, (H, T, S).
  virtual void attend(const std::vector<int>& source, const std::vector<int>& target) = 0;
  virtual const float* cross_attention(int layer) = 0;
};

// The bag-of-words LM's attention: for each word of a text, its weights on the earlier words.
class WordAttention {
 public:
  virtual ~WordAttention() = default;
  virtual int window() const = 0;           // the most words it reads
  virtual std::string scoring() const = 0;  // how it weighs them: "dot", "additive", "mean", "idf", "none"
  virtual bool attends() const = 0;         // false for "none", the plain bigram
  // One forward pass over ids (T) with next-word targets (-1: none); then attention_weights()
  // (T, T; row t over k < t) and losses() (T) of that pass.
  virtual void attend(const int* ids, const int* targets, int T) = 0;
  virtual const float* attention_weights() const = 0;
  virtual const float* losses() const = 0;
};

}  // namespace potop
