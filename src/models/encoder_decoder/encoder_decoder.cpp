// The encoder-decoder: layers built once per config (Layers) and shared by every replica. Forward
// is source embedding, encoder, target embedding, decoder, head; backward is that list reversed,
// the decoder's cross-attention layers summing the gradient of the encoder's output on the way.
#include "models/encoder_decoder/encoder_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/error.h"
#include "core/profile.h"
#include "nn/attention_layer.h"
#include "nn/embedding_layer.h"
#include "nn/lm_head.h"
#include "nn/mlp_layer.h"
#include "nn/residual_stack.h"

namespace potop {

struct EncoderDecoderLayers {
  explicit EncoderDecoderLayers(const EncoderDecoderConfig& c);

  EncoderDecoderConfig config;
  LayerBuilder built;       // the parameter layout; built.acts is the decoder's activation plan
  ActivationPlan enc_acts;  // the encoder's (B·S rows)
  ParamId wte = kNoParam;
  std::unique_ptr<EmbeddingLayer> src_embed, tgt_embed;
  std::unique_ptr<ResidualStack> encoder, decoder;
  std::unique_ptr<TiedLMHead> head;
  std::vector<const AttentionLayer*> cross;  // decoder block l's cross-attention, for pictures
};

EncoderDecoderLayers::EncoderDecoderLayers(const EncoderDecoderConfig& c) : config(validated(c)) {
  const int C = c.n_embd;
  const float scale = std::sqrt(static_cast<float>(C));
  const double proj_std = 0.02 / std::sqrt(2.0 * c.n_layer);
  const MlpConfig mlp{C, 4 * C, c.activation, c.bias, proj_std};
  auto attention = [&](bool causal, bool is_cross) { return AttentionConfig{C, c.n_head, c.bias, causal, is_cross, proj_std}; };
  // One table for source, target and output, N(0, C^-1/2) so that √C·wte has unit scale.
  wte = built.param("wte.weight", {c.vocab_size, C}, TensorInit::normal(1.0 / std::sqrt(double(C))), true);

  src_embed = std::make_unique<EmbeddingLayer>(built, "encoder.", wte, c.block_size, C, c.positions, scale);
  encoder = std::make_unique<ResidualStack>(built, c.norm, C);
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "encoder.h." + std::to_string(l) + ".";
    const LayerNormParams ln1(built, h + "ln_1", C, c.bias);
    encoder->add(built, ln1, std::make_unique<AttentionLayer>(built, h + "attn", attention(false, false)));
    const LayerNormParams ln2(built, h + "ln_2", C, c.bias);
    encoder->add(built, ln2, std::make_unique<MlpLayer>(built, h + "mlp", mlp));
  }
  if (c.norm == NormPlacement::kPre) encoder->set_final_norm(built, LayerNormParams(built, "encoder.ln_f", C, c.bias));
  enc_acts = std::move(built.acts);  // what follows runs on the decoder's rows
  built.acts = ActivationPlan();

  tgt_embed = std::make_unique<EmbeddingLayer>(built, "decoder.", wte, c.block_size, C, c.positions, scale);
  decoder = std::make_unique<ResidualStack>(built, c.norm, C);
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "decoder.h." + std::to_string(l) + ".";
    const LayerNormParams ln1(built, h + "ln_1", C, c.bias);
    decoder->add(built, ln1, std::make_unique<AttentionLayer>(built, h + "attn", attention(true, false)));
    const LayerNormParams lnx(built, h + "ln_cross_attn", C, c.bias);
    auto xattn = std::make_unique<AttentionLayer>(built, h + "crossattention", attention(false, true));
    cross.push_back(xattn.get());
    decoder->add(built, lnx, std::move(xattn));
    const LayerNormParams ln2(built, h + "ln_2", C, c.bias);
    decoder->add(built, ln2, std::make_unique<MlpLayer>(built, h + "mlp", mlp));
  }
  if (c.norm == NormPlacement::kPre) decoder->set_final_norm(built, LayerNormParams(built, "decoder.ln_f", C, c.bias));
  head = std::make_unique<TiedLMHead>(built, wte, c.vocab_size, C, kNoParam, c.label_smoothing);
}

EncoderDecoder::EncoderDecoder(const EncoderDecoderConfig& config) : LayeredModel(std::make_shared<const Layers>(config)) {
  bind_activations();
}

EncoderDecoder::EncoderDecoder(std::shared_ptr<const Layers> layers, const ParameterSet& shared)
    : LayeredModel(std::move(layers), shared) {
  bind_activations();
}

void EncoderDecoder::bind_activations() {
  enc_acts_ = Activations(layers_, layers_->enc_acts);
  dec_acts_ = Activations(layers_, layers_->built.acts);
}

const EncoderDecoderConfig& EncoderDecoder::config() const { return layers_->config; }

MemoryPlan EncoderDecoder::plan(const EncoderDecoderConfig& config, const BatchShape& shape) {
  const Layers layers(config);
  const double S = shape.S > 0 ? shape.S : shape.T;
  const double token_rows = double(shape.B) * shape.T, memory_rows = double(shape.B) * S;
  MemoryPlan plan;
  plan.add_parameters(layers.built.params);
  plan.add_activations(layers.enc_acts, memory_rows, 0, "encoder ");
  plan.add_activations(layers.built.acts, token_rows, memory_rows, "decoder ");
  return plan;
}

Layout EncoderDecoder::parameter_layout(const EncoderDecoderConfig& config) { return Layers(config).built.params; }

void EncoderDecoder::reserve(const BatchShape& shape) {
  const int S = shape.S > 0 ? shape.S : shape.T;
  POTOP_CHECK(shape.B > 0 && shape.T > 0 && shape.T <= config().block_size && S <= config().block_size,
              "batch shape out of range");
  enc_acts_.reserve(int64_t{shape.B} * S);
  dec_acts_.reserve(int64_t{shape.B} * shape.T, int64_t{shape.B} * S);
  has_forward_ = false;
}

float EncoderDecoder::forward(const Batch& batch, const Pass& pass) {
  const profile::Scope scope("forward");
  const Layers& L = *layers_;
  POTOP_CHECK(batch.source && batch.S > 0 && batch.T > 0, "an encoder-decoder batch needs a source and a target");
  reserve(batch);
  LayerPass enc;
  enc.B = batch.B, enc.T = batch.S, enc.lengths = batch.source_lengths;
  enc.dropout = pass.training ? config().dropout : 0.0f;
  enc.dropout_seed = pass.dropout_seed;
  LayerPass dec = enc;
  dec.T = batch.T, dec.lengths = nullptr;
  dec.S = batch.S, dec.memory_lengths = batch.source_lengths;
  const Frame ef{params_, enc_acts_}, df{params_, dec_acts_};
  source_ = batch.source, tokens_ = batch.tokens, targets_ = batch.targets;
  src_x_ = L.src_embed->forward(batch.source, enc, ef);  // x = dropout(√C·wte[source] + positions)
  memory_ = L.encoder->forward(src_x_, enc, ef);          // memory = encoder(x)
  dec.memory = memory_;
  tgt_x_ = L.tgt_embed->forward(batch.tokens, dec, df);   // y = dropout(√C·wte[target] + positions)
  output_ = L.decoder->forward(tgt_x_, dec, df);          // h = decoder(y, memory)
  const float loss = L.head->forward(output_, batch.targets, dec, df, counted_);  // logits = h·wteᵀ; loss
  enc_pass_ = enc, dec_pass_ = dec;
  has_forward_ = batch.targets != nullptr;
  return loss;
}

void EncoderDecoder::backward(float loss_scale) {
  const profile::Scope scope("backward");
  POTOP_CHECK(has_forward_, "backward() needs a forward() with targets first");
  const Layers& L = *layers_;
  params_.grads();
  enc_acts_.reserve_scratch();
  dec_acts_.reserve_scratch();
  const Frame ef{params_, enc_acts_}, df{params_, dec_acts_};
  // Every cross-attention layer adds its part of d memory into the encoder's output gradient.
  float* d_memory = L.encoder->output_grad(ef);
  std::memset(d_memory, 0, sizeof(float) * size_t(enc_pass_.rows()) * config().n_embd);
  LayerPass dec = dec_pass_;
  dec.d_memory = d_memory;
  // logits = h·wteᵀ, into d h
  L.head->backward(L.decoder->output_grad(df), loss_scale, counted_, output_, targets_, dec, df);
  // h = decoder(y, memory), into d y and d memory
  const ResidualStack::InputGrad dy = L.decoder->backward(tgt_x_, dec, df);
  // y = dropout(√C·wte[target] + positions)
  L.tgt_embed->backward(dy.dx, dy.free, tokens_, dec, df);
  // memory = encoder(x), into d x
  const ResidualStack::InputGrad dx = L.encoder->backward(src_x_, enc_pass_, ef);
  // x = dropout(√C·wte[source] + positions)
  L.src_embed->backward(dx.dx, dx.free, source_, enc_pass_, ef);
}

const float* EncoderDecoder::logits() const { return layers_->head->logits(dec_acts_); }

const float* EncoderDecoder::cross_attention(int layer) {
  POTOP_CHECK(layer >= 0 && layer < config().n_layer && dec_pass_.B > 0 && !dec_pass_.cache && !dec_pass_.memory_kv,
              "cross_attention(): no such layer, or no forward without a cache yet");
  const int B = dec_pass_.B, T = dec_pass_.T, S = dec_pass_.S, H = config().n_head;
  attention_map_.resize(size_t(B) * H * T * S);
  layers_->cross[layer]->probabilities(attention_map_.data(), attention_scratch_, dec_pass_,
                                       Frame{params_, dec_acts_});
  return attention_map_.data();
}

MemoryKV EncoderDecoder::encode_source(const int* source, int S) {
  POTOP_CHECK(S > 0 && S <= config().block_size, "source longer than block_size");
  const Layers& L = *layers_;
  enc_acts_.reserve(S);
  LayerPass enc;
  enc.B = 1, enc.T = S;
  const Frame ef{params_, enc_acts_};
  const float* memory = L.encoder->forward(L.src_embed->forward(source, enc, ef), enc, ef);  // memory = encoder(x)
  MemoryKV m(int(L.cross.size()), S, config().n_embd);
  for (const AttentionLayer* cross : L.cross) cross->project_memory(m, memory, ef);  // [K V] = memory·W_kv + b_kv
  has_forward_ = false;
  return m;
}

void EncoderDecoder::encode(const int* source, int S) { encoded_ = encode_source(source, S); }

const float* EncoderDecoder::decode(const int* tokens, int T, KVCache& cache) {
  POTOP_CHECK(encoded_.S > 0, "decode() needs encode() first");
  POTOP_CHECK(cache.length + T <= config().block_size, "target longer than block_size");
  const Layers& L = *layers_;
  dec_acts_.reserve(T);
  row_sources_.assign(1, &encoded_);
  LayerPass dec;
  dec.B = 1, dec.T = T, dec.pos0 = cache.length, dec.cache = &cache;
  dec.memory_kv = row_sources_.data();
  const Frame df{params_, dec_acts_};
  const float* h = L.decoder->forward(L.tgt_embed->forward(tokens, dec, df), dec, df);
  int counted = 0;
  L.head->forward(h, nullptr, dec, df, counted);
  cache.length += T;
  has_forward_ = false;
  dec_pass_ = dec;
  return L.head->logits(dec_acts_);
}

const float* EncoderDecoder::decode_rows(const int* tokens, int B, KVCache* const* caches) {
  POTOP_CHECK(encoded_.S > 0, "decode_rows() needs encode() first");
  row_sources_.assign(size_t(B), &encoded_);
  return decode_rows(tokens, B, caches, row_sources_.data());
}

const float* EncoderDecoder::decode_rows(const int* tokens, int B, KVCache* const* caches,
                                         const MemoryKV* const* sources) {
  POTOP_CHECK(B > 0, "decode_rows() needs at least one row");
  for (int b = 0; b < B; ++b) {
    POTOP_CHECK(caches[b]->length < config().block_size, "target longer than block_size");
    POTOP_CHECK(sources[b] && sources[b]->S > 0, "decode_rows(): a row without an encoded source");
  }
  const Layers& L = *layers_;
  dec_acts_.reserve(B);
  LayerPass dec;
  dec.B = B, dec.T = 1, dec.caches = caches;  // each row at its own cache's length
  dec.memory_kv = sources;                    // and with its own sentence's keys and values
  const Frame df{params_, dec_acts_};
  const float* h = L.decoder->forward(L.tgt_embed->forward(tokens, dec, df), dec, df);
  int counted = 0;
  L.head->forward(h, nullptr, dec, df, counted);
  for (int b = 0; b < B; ++b) ++caches[b]->length;
  has_forward_ = false;
  dec_pass_ = dec;
  return L.head->logits(dec_acts_);
}

KVCache EncoderDecoder::new_cache() const {
  return KVCache(layers_->built.cache_slots, config().block_size, config().n_head, config().n_embd / config().n_head);
}

}  // namespace potop
