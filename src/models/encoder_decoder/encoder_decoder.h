// The original Transformer ("Attention Is All You Need"): an encoder over the source sentence and
// a decoder that predicts the target sentence attending to it, one client of the model contract
// (model.h) built from the same layers as the GPT:
//
//   x      = dropout(√C·wte[source] + positions)        EmbeddingLayer (the shared table)
//   memory = encoder(x): per block, Add & Norm around   ResidualStack of
//              self-attention (source padding masked)     AttentionLayer (not causal)
//              and the feed-forward MLP                   MlpLayer
//   y      = dropout(√C·wte[target] + positions)        EmbeddingLayer (the same table)
//   h      = decoder(y): per block, Add & Norm around   ResidualStack of
//              masked (look-ahead) self-attention,        AttentionLayer (causal)
//              cross-attention over memory (padding       AttentionLayer (cross)
//              masked), the feed-forward MLP              MlpLayer
//   logits = h · wteᵀ; loss = label-smoothed CE         TiedLMHead
//
// The source and target share one subword vocabulary and one embedding table, which is also the
// output projection (the paper's weight sharing), so the table is scaled by √C on input and
// initialised N(0, C^-1/2). Post-LN (the paper) or pre-LN (each stack then ends in ln_f).
//
// Parameter names (the checkpoint format): wte.weight; encoder.wpe.weight and decoder.wpe.weight
// when positions are learned; encoder.h.<l>.{ln_1, attn, ln_2, mlp}; decoder.h.<l>.{ln_1, attn,
// ln_cross_attn, crossattention, ln_2, mlp} (Hugging Face's GPT-2 names for cross-attention);
// encoder.ln_f and decoder.ln_f with pre-LN.
//
// The encoder's buffers hold B·S rows and the decoder's B·T (its cross-attention's B·S), so the
// two stacks keep separate activation plans.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "nn/activations.h"
#include "models/encoder_decoder/encoder_decoder_config.h"
#include "nn/kv_cache.h"
#include "nn/layer.h"
#include "nn/layered_model.h"
#include "nn/model.h"
#include "nn/tasks.h"

namespace potop {

struct EncoderDecoderLayers;  // the architecture (encoder_decoder.cpp)

class EncoderDecoder final : public LayeredModel<EncoderDecoder, EncoderDecoderLayers>, public Seq2Seq {
 public:
  explicit EncoderDecoder(const EncoderDecoderConfig& config);  // parameters zero: init_weights, or load them
  static MemoryPlan plan(const EncoderDecoderConfig& config, const BatchShape& shape);
  static Layout parameter_layout(const EncoderDecoderConfig& config);

  const EncoderDecoderConfig& config() const;

  // The model contract. A batch carries the source (B, S) with its lengths, and the decoder's
  // input tokens and targets (B, T).
  void reserve(const BatchShape& shape) override;
  float forward(const Batch& batch, const Pass& pass) override;
  void backward(float loss_scale) override;
  MemoryPlan memory_plan(const BatchShape& shape) const override { return plan(config(), shape); }

  const float* logits() const;  // (B, T, V) of the last forward
  // Cross-attention probabilities of decoder block l in the last forward (one without a KV
  // cache): (B, H, T, S), recomputed as GPT::attention does.
  const float* cross_attention(int layer) override;

  // Sequence to sequence (nn/tasks.h; encoder_decoder_tasks.cpp): translator.h's search, and one
  // teacher-forced pass for the cross-attention.
  int context_length() const override { return config().block_size; }
  int attention_layers() const override { return config().n_layer; }
  int attention_heads() const override { return config().n_head; }
  std::vector<int> translate(std::span<const int> source, const DecodeOptions& options) override;
  void attend(const std::vector<int>& source, const std::vector<int>& target) override;

  // Generation. encode_source() runs the encoder once on a source sentence (S tokens) and
  // projects its output into every cross-attention layer's keys and values: what decoding that
  // sentence reads at every step, for every hypothesis.
  MemoryKV encode_source(const int* source, int S);
  // B rows, each a hypothesis of its own sentence, advanced by one token each in one pass
  // (LayerPass::caches and memory_kv, as GPT::forward_rows): tokens (B); caches[b] the row's
  // self-attention keys and values (at its own length); sources[b] its sentence's encode_source().
  // Rows of several sentences mix freely. Returns the logits (B, V); row b gives what decode()
  // of that hypothesis alone gives, up to the rounding of a B-row GEMM.
  const float* decode_rows(const int* tokens, int B, KVCache* const* caches, const MemoryKV* const* sources);

  // The same for one sentence at a time: encode() keeps encode_source()'s result; decode() then
  // feeds T target tokens continuing the hypothesis whose self-attention keys and values `cache`
  // holds, and returns the logits (T, V) of those positions; decode_rows() above with every row's
  // source the encoded one.
  void encode(const int* source, int S);
  const float* decode(const int* tokens, int T, KVCache& cache);
  const float* decode_rows(const int* tokens, int B, KVCache* const* caches);
  KVCache new_cache() const;

 private:
  using Layers = EncoderDecoderLayers;
  friend LayeredModel;
  EncoderDecoder(std::shared_ptr<const Layers> layers, const ParameterSet& shared);
  void bind_activations();

  Activations enc_acts_, dec_acts_;
  // The last forward: what backward and the accessors read.
  LayerPass enc_pass_{}, dec_pass_{};
  const int *source_ = nullptr, *tokens_ = nullptr, *targets_ = nullptr;
  const float *src_x_ = nullptr, *memory_ = nullptr, *tgt_x_ = nullptr, *output_ = nullptr;
  bool has_forward_ = false;
  MemoryKV encoded_;                           // encode()'s sentence
  std::vector<const MemoryKV*> row_sources_;   // decode_rows()'s, all &encoded_
  std::vector<float> attention_map_, attention_scratch_;
  std::vector<int> attended_input_;  // attend()'s decoder input: <s> and the target
};

}  // namespace potop
