// GPT forward and backward. Each line is one kernel call; the backward is the forward read
// bottom-up, each step quoting the line it differentiates.
#include "model/gpt.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/profile.h"
#include "core/rng.h"
#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/dropout.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "kernels/softmax.h"

namespace potop {

namespace {

void zero(float* p, size_t n) {
  POTOP_PROFILED("memset", std::memset(p, 0, n * sizeof(float)));
}

}  // namespace

uint64_t dropout_site_seed(uint64_t step_seed, int site) { return hash64(step_seed, static_cast<uint64_t>(site)); }

GPT::GPT(const GPTConfig& config) : GPT(config, nullptr) {}

GPT::GPT(const GPTConfig& config, std::shared_ptr<Arena> params) : config_(config) {
  config_.validate();
  layout_ = gpt_parameter_layout(config_);
  params_ = params ? std::move(params) : std::make_shared<Arena>(layout_);
  p_ = bind_gpt_params(config_, layout_, *params_);
  if (config_.positions == PositionEncoding::kSinusoidal) {
    sinusoid_.resize(static_cast<size_t>(config_.block_size) * config_.n_embd);
    sinusoidal_positions(sinusoid_.data(), config_.block_size, config_.n_embd);
  }
}

GPT GPT::replica_of(const GPT& primary) { return GPT(primary.config_, primary.params_); }

void GPT::init_weights(uint64_t seed) {
  Rng rng(seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * config_.n_layer);
  for (const TensorSpec& spec : layout_.specs()) {
    float* w = params_->at(spec);
    const bool is_bias = spec.name.ends_with(".bias");
    const bool is_norm = spec.name.find("ln_") != std::string::npos;
    if (is_bias) {
      zero(w, spec.numel);
    } else if (is_norm) {
      for (size_t i = 0; i < spec.numel; ++i) w[i] = 1.0f;
    } else {
      const bool into_residual = spec.name.ends_with("c_proj.weight");
      const double std = into_residual ? residual_std : 0.02;
      for (size_t i = 0; i < spec.numel; ++i) w[i] = static_cast<float>(rng.normal() * std);
    }
  }
}

Arena& GPT::grads() {
  if (!grads_.data()) {
    grads_ = Arena(layout_);
    g_ = bind_gpt_params(config_, layout_, grads_);
  }
  return grads_;
}

void GPT::zero_grad() { POTOP_PROFILED("zero_grad", grads().zero()); }

void GPT::reserve(int B, int T, int Tk) {
  POTOP_CHECK(B > 0 && T > 0 && T <= config_.block_size && Tk >= T && Tk <= config_.block_size,
              "batch shape out of range");
  const int64_t C = config_.n_embd, H = config_.n_head, V = config_.vocab_size;
  const int64_t BT = int64_t{B} * T;
  B_ = B, T_ = T;
  has_forward_ = false;
  // Every buffer is row-major over (b, t) rows, so buffers sized for more rows serve any
  // smaller batch shape: only grow.
  if (BT <= capacity_rows_) return;
  capacity_rows_ = BT;
  const int64_t R = capacity_rows_;
  Layout acts;
  const size_t encoded = acts.add("encoded", {R, C});
  struct Ids { size_t ln1, ln1_mean, ln1_rstd, qkv, att_stats, atty, res2, ln2, ln2_mean, ln2_rstd, fch, fch_act, res3; };
  std::vector<Ids> ids;
  for (int l = 0; l < config_.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    ids.push_back(Ids{acts.add(h + "ln1", {R, C}), acts.add(h + "ln1_mean", {R}), acts.add(h + "ln1_rstd", {R}),
                      acts.add(h + "qkv", {R, 3 * C}), acts.add(h + "att_stats", {R, H, 2}),
                      acts.add(h + "atty", {R, C}), acts.add(h + "res2", {R, C}), acts.add(h + "ln2", {R, C}),
                      acts.add(h + "ln2_mean", {R}), acts.add(h + "ln2_rstd", {R}), acts.add(h + "fch", {R, 4 * C}),
                      acts.add(h + "fch_act", {R, 4 * C}), acts.add(h + "res3", {R, C})});
  }
  const size_t proj = acts.add("proj", {R, C});
  const size_t lnf = acts.add("lnf", {R, C}), lnf_mean = acts.add("lnf_mean", {R}), lnf_rstd = acts.add("lnf_rstd", {R});
  const size_t logits = acts.add("logits", {R, V}), probs = acts.add("probs", {R, V}), losses = acts.add("losses", {R});
  Layout scratch;
  const size_t dresidual = scratch.add("dresidual", {R, C}), dbtc = scratch.add("dbtc", {R, C}),
               dbtc2 = scratch.add("dbtc2", {R, C}), dqkv = scratch.add("dqkv", {R, 3 * C}),
               dfch = scratch.add("dfch", {R, 4 * C}), dlosses = scratch.add("dlosses", {R});
  act_arena_ = Arena(acts);
  // The backward scratch is allocated on the first backward pass: generation never needs it.
  scratch_ = Arena();
  auto a = [&](size_t i) { return act_arena_.at(acts.specs()[i]); };
  encoded_ = a(encoded);
  acts_.clear();
  for (const Ids& i : ids) {
    acts_.push_back(BlockActivations{a(i.ln1), a(i.ln1_mean), a(i.ln1_rstd), a(i.qkv), a(i.att_stats), a(i.atty),
                                     a(i.res2), a(i.ln2), a(i.ln2_mean), a(i.ln2_rstd), a(i.fch), a(i.fch_act),
                                     a(i.res3)});
  }
  proj_ = a(proj);
  lnf_ = a(lnf), lnf_mean_ = a(lnf_mean), lnf_rstd_ = a(lnf_rstd);
  logits_ = a(logits), probs_ = a(probs), losses_ = a(losses);
  act_layout_ = std::move(acts);
  scratch_layout_ = std::move(scratch);
  scratch_ids_ = {dresidual, dbtc, dbtc2, dqkv, dfch, dlosses};
}

void GPT::bind_scratch() {
  if (!scratch_.data()) scratch_ = Arena(scratch_layout_);
  auto s = [&](size_t i) { return scratch_.at(scratch_layout_.specs()[i]); };
  dresidual_ = s(scratch_ids_[0]), dbtc_ = s(scratch_ids_[1]), dbtc2_ = s(scratch_ids_[2]), dqkv_ = s(scratch_ids_[3]),
  dfch_ = s(scratch_ids_[4]), dlosses_ = s(scratch_ids_[5]);
}

const float* GPT::block_output(int l) const {
  return config_.norm == NormPlacement::kPre ? acts_[l].res3 : acts_[l].ln2;
}
const float* GPT::block_input(int l) const { return l == 0 ? encoded_ : block_output(l - 1); }

std::vector<std::pair<std::string, size_t>> GPT::memory_plan() const {
  std::vector<std::pair<std::string, size_t>> plan;
  plan.emplace_back("parameters", layout_.total_bytes());
  plan.emplace_back("gradients", layout_.total_bytes());
  // Activations grouped by kind across layers ("h.3.att" -> "att").
  std::vector<std::pair<std::string, size_t>> kinds;
  for (const TensorSpec& s : act_layout_.specs()) {
    std::string kind = s.name.starts_with("h.") ? s.name.substr(s.name.find('.', 2) + 1) : s.name;
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](auto& k) { return k.first == kind; });
    if (it == kinds.end()) kinds.emplace_back(kind, s.numel * sizeof(float));
    else it->second += s.numel * sizeof(float);
  }
  for (auto& [kind, bytes] : kinds) plan.emplace_back("activation " + kind, bytes);
  plan.emplace_back("backward scratch", scratch_layout_.total_bytes());
  return plan;
}

const float* GPT::attention(int layer) {
  POTOP_CHECK(layer >= 0 && layer < config_.n_layer && B_ > 0, "attention(): no such layer, or no forward yet");
  const int B = B_, T = T_, C = config_.n_embd, H = config_.n_head;
  const AttentionDims dims{B, T, T, H, config_.head_size(), 3 * C, 3 * C, 3 * C};
  attention_map_.resize(size_t(B) * H * T * T);
  attention_out_.resize(size_t(B) * T * C + attention_stats_size(dims));
  const float* qkv = acts_[layer].qkv;
  attention_forward(attention_out_.data(), attention_out_.data() + size_t(B) * T * C, attention_map_.data(), qkv,
                    qkv + C, qkv + 2 * C, dims, {MaskKind::kCausal, nullptr});
  return attention_map_.data();
}

KVCache::KVCache(const GPTConfig& c)
    : k(size_t(c.n_layer) * c.block_size * c.n_embd), v(size_t(c.n_layer) * c.block_size * c.n_embd) {}

float GPT::forward(const int* tokens, const int* targets, int B, int T, bool training, uint64_t dropout_seed,
                   KVCache* cache) {
  const profile::Scope scope("forward");
  const int pos0 = cache ? cache->length : 0;
  POTOP_CHECK(!cache || (B == 1 && !targets && !training), "a KV cache is for batch-1 generation");
  POTOP_CHECK(pos0 + T <= config_.block_size, "context longer than block_size");
  reserve(B, T, pos0 + T);
  const int L = config_.n_layer, C = config_.n_embd, V = config_.vocab_size, BT = B * T;
  const size_t btc = static_cast<size_t>(BT) * C;
  const float p = training ? config_.dropout : 0.0f;
  const bool pre = config_.norm == NormPlacement::kPre;
  const float* positions = config_.positions == PositionEncoding::kLearned ? p_.wpe : sinusoid_.data();
  const int Tk = pos0 + T;  // keys: the cached positions, then this call's
  const int H = config_.n_head, D = config_.head_size(), Tmax = config_.block_size;
  // Keys and values come from the fused QKV buffer, or from the cache, (H, Tmax, D) per layer.
  AttentionDims dims{B, T, Tk, H, D, 3 * C, 3 * C, 3 * C};
  if (cache) dims.k_stride = dims.v_stride = D, dims.k_head_stride = dims.v_head_stride = Tmax * D;
  const AttentionMask causal{MaskKind::kCausal, nullptr};
  tokens_ = tokens, targets_ = targets, training_ = training, dropout_seed_ = dropout_seed;
  // Pre-LN: every residual add is followed by a LayerNorm that reads it, and the two run fused.
  // The add that ends block l feeds block l + 1's ln_1, or ln_f after the last block.
  struct Norm { float* out; float* mean; float* rstd; const float* w; const float* b; };
  auto norm_after_block = [&](int l) {
    if (l + 1 == L) return Norm{lnf_, lnf_mean_, lnf_rstd_, p_.lnf_w, p_.lnf_b};
    const BlockActivations& n = acts_[l + 1];
    return Norm{n.ln1, n.ln1_mean, n.ln1_rstd, p_.h[l + 1].ln1_w, p_.h[l + 1].ln1_b};
  };

  POTOP_PROFILED("embedding", embedding_forward(encoded_, tokens, p_.wte, positions, B, T, C, pos0));  // x = wte[tok] + wpe[t]
  POTOP_PROFILED("dropout", dropout_forward(encoded_, encoded_, p, dropout_site_seed(dropout_seed, 0), btc));
  if (pre) {
    const BlockActivations& a = acts_[0];
    POTOP_PROFILED("layernorm", layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, encoded_, p_.h[0].ln1_w, p_.h[0].ln1_b, BT, C));  // ln1 = LN(x)
  }
  for (int l = 0; l < L; ++l) {
    const BlockParams& w = p_.h[l];
    const BlockActivations& a = acts_[l];
    const float* x = block_input(l);
    const float* attn_in = pre ? a.ln1 : x;
    POTOP_PROFILED("qkv", linear_forward(a.qkv, attn_in, w.qkv_w, w.qkv_b, BT, C, 3 * C));  // [q k v] = in·W + b
    const float* k = a.qkv + C;
    const float* v = a.qkv + 2 * C;
    if (cache) {  // append this call's keys and values, head by head, then attend over all of them
      float* k_cache = cache->k.data() + size_t(l) * Tmax * C;
      float* v_cache = cache->v.data() + size_t(l) * Tmax * C;
      for (int t = 0; t < T; ++t)
        for (int h = 0; h < H; ++h) {
          const float* row = a.qkv + size_t(t) * 3 * C + h * D;
          std::memcpy(k_cache + (size_t(h) * Tmax + pos0 + t) * D, row + C, D * sizeof(float));
          std::memcpy(v_cache + (size_t(h) * Tmax + pos0 + t) * D, row + 2 * C, D * sizeof(float));
        }
      k = k_cache, v = v_cache;
    }
    POTOP_PROFILED("attention", attention_forward(a.atty, a.att_stats, nullptr, a.qkv, k, v, dims, causal, p,
                                                  dropout_site_seed(dropout_seed, 1 + 3 * l)));  // softmax(qkᵀ/√d)·v
    POTOP_PROFILED("attn proj", linear_forward(proj_, a.atty, w.attproj_w, w.attproj_b, BT, C, C));  // heads -> C
    POTOP_PROFILED("dropout", dropout_forward(proj_, proj_, p, dropout_site_seed(dropout_seed, 2 + 3 * l), btc));
    float* mlp_in;
    if (pre) {
      POTOP_PROFILED("residual+layernorm", residual_layernorm_forward(a.res2, a.ln2, a.ln2_mean, a.ln2_rstd, x, proj_, w.ln2_w, w.ln2_b, BT, C));  // res2 = x + attn; ln2 = LN(res2)
      mlp_in = a.ln2;
    } else {
      POTOP_PROFILED("residual+layernorm", residual_layernorm_forward(a.res2, a.ln1, a.ln1_mean, a.ln1_rstd, x, proj_, w.ln1_w, w.ln1_b, BT, C));  // res2 = x + attn; ln1 = LN(res2)
      mlp_in = a.ln1;
    }
    POTOP_PROFILED("fc", linear_forward(a.fch, mlp_in, w.fc_w, nullptr, BT, C, 4 * C));  // fch = in·W₁ (+ b₁ next)
    if (config_.activation == Activation::kGelu) POTOP_PROFILED("bias+gelu", bias_gelu_forward(a.fch_act, a.fch, w.fc_b, BT, 4 * C));
    else POTOP_PROFILED("bias+relu", bias_relu_forward(a.fch_act, a.fch, w.fc_b, BT, 4 * C));  // fch += b₁; act = f(fch)
    POTOP_PROFILED("fc proj", linear_forward(proj_, a.fch_act, w.fcproj_w, w.fcproj_b, BT, 4 * C, C));  // act·W₂ + b₂
    POTOP_PROFILED("dropout", dropout_forward(proj_, proj_, p, dropout_site_seed(dropout_seed, 3 + 3 * l), btc));
    if (pre) {
      const Norm n = norm_after_block(l);
      POTOP_PROFILED("residual+layernorm", residual_layernorm_forward(a.res3, n.out, n.mean, n.rstd, a.res2, proj_, n.w, n.b, BT, C));  // res3 = res2 + mlp; next = LN(res3)
    } else {
      POTOP_PROFILED("residual+layernorm", residual_layernorm_forward(a.res3, a.ln2, a.ln2_mean, a.ln2_rstd, a.ln1, proj_, w.ln2_w, w.ln2_b, BT, C));  // res3 = ln1 + mlp; ln2 = LN(res3)
    }
  }
  const float* head_in = pre ? lnf_ : block_output(L - 1);  // pre-LN: lnf = LN(x), made by the last block
  POTOP_PROFILED("lm head", linear_forward(logits_, head_in, p_.wte, nullptr, BT, C, V, WeightLayout::kOutIn));  // logits = x·wteᵀ
  if (cache) cache->length += T;
  has_forward_ = targets != nullptr;
  counted_ = 0;
  if (!targets) return 0.0f;
  POTOP_PROFILED("cross-entropy", crossentropy_forward(losses_, probs_, logits_, targets, BT, V));
  double sum = 0;
  for (int i = 0; i < BT; ++i) {
    if (targets[i] >= 0) sum += losses_[i], ++counted_;
  }
  return counted_ ? static_cast<float>(sum / counted_) : 0.0f;
}

void GPT::backward(float loss_scale) {
  const profile::Scope scope("backward");
  POTOP_CHECK(has_forward_, "backward() needs a forward() with targets first");
  grads();
  bind_scratch();
  const int B = B_, T = T_, C = config_.n_embd, V = config_.vocab_size, BT = B * T;
  const size_t btc = static_cast<size_t>(BT) * C;
  const float p = training_ ? config_.dropout : 0.0f;
  const bool pre = config_.norm == NormPlacement::kPre;
  const AttentionDims dims{B, T, T, config_.n_head, config_.head_size(), 3 * C, 3 * C, 3 * C};
  const AttentionMask causal{MaskKind::kCausal, nullptr};
  constexpr GradStore kSet = GradStore::kOverwrite;  // into a scratch buffer that holds nothing yet
  // d(dropout(x)) -> dx, into a zeroed scratch buffer; without dropout the gradient passes as is.
  auto through_dropout = [&](float* scratch, const float* dout, int site) -> const float* {
    if (p == 0.0f) return dout;
    zero(scratch, btc);
    POTOP_PROFILED("dropout", dropout_backward(scratch, dout, p, dropout_site_seed(dropout_seed_, site), btc));
    return scratch;
  };
  // In place: d(act) -> d(fch), and d(bias) of the linear layer before
  auto activation_backward = [&](float* d, float* dbias, const float* inp) {
    if (config_.activation == Activation::kGelu) POTOP_PROFILED("bias+gelu", bias_gelu_backward(d, dbias, d, inp, BT, 4 * C));
    else POTOP_PROFILED("bias+relu", bias_relu_backward(d, dbias, d, inp, BT, 4 * C));
  };

  // loss = Σ losses / counted
  const float dloss = counted_ ? loss_scale / static_cast<float>(counted_) : 0.0f;
  for (int i = 0; i < BT; ++i) dlosses_[i] = targets_[i] >= 0 ? dloss : 0.0f;
  float* dlogits = probs_;
  POTOP_PROFILED("cross-entropy", crossentropy_backward(dlogits, probs_, targets_, dlosses_, BT, V));
  // logits = x·wteᵀ
  const float* x_last = block_output(config_.n_layer - 1);
  if (pre) {
    POTOP_PROFILED("lm head", linear_backward(dbtc_, g_.wte, nullptr, dlogits, lnf_, p_.wte, BT, C, V, WeightLayout::kOutIn, kSet));
    // lnf = LN(x)
    zero(dresidual_, btc);
    POTOP_PROFILED("layernorm", layernorm_backward(dresidual_, g_.lnf_w, g_.lnf_b, dbtc_, x_last, p_.lnf_w, lnf_mean_, lnf_rstd_, BT, C));
  } else {
    POTOP_PROFILED("lm head", linear_backward(dresidual_, g_.wte, nullptr, dlogits, x_last, p_.wte, BT, C, V, WeightLayout::kOutIn, kSet));
  }

  for (int l = config_.n_layer - 1; l >= 0; --l) {
    const BlockParams& w = p_.h[l];
    const BlockParams& g = g_.h[l];
    const BlockActivations& a = acts_[l];
    const float* x = block_input(l);
    // Here dresidual_ holds d(block output). d_mlp_in is where d(the MLP's input) accumulates.
    float* d_res3 = dresidual_;
    float* d_mlp_in = dresidual_;  // pre-LN: res3 = res2 + mlp, so d res2 starts as d res3
    if (!pre) {
      // ln2 = LN(res3)
      zero(dbtc2_, btc);
      POTOP_PROFILED("layernorm", layernorm_backward(dbtc2_, g.ln2_w, g.ln2_b, dresidual_, a.res3, w.ln2_w, a.ln2_mean, a.ln2_rstd, BT, C));
      d_res3 = d_mlp_in = dbtc2_;  // res3 = ln1 + mlp, so d ln1 starts as d res3
    }
    // fcproj = dropout(act·W₂ + b₂)
    const float* dfcproj = through_dropout(dbtc_, d_res3, 3 + 3 * l);
    POTOP_PROFILED("fc proj", linear_backward(dfch_, g.fcproj_w, g.fcproj_b, dfcproj, a.fch_act, w.fcproj_w, BT, 4 * C, C, WeightLayout::kInOut, kSet));
    // act = f(fch), fch = in·W₁ + b₁: d fch, and d b₁
    activation_backward(dfch_, g.fc_b, a.fch);
    // fch = in·W₁
    if (pre) {
      POTOP_PROFILED("fc", linear_backward(dbtc2_, g.fc_w, nullptr, dfch_, a.ln2, w.fc_w, BT, C, 4 * C, WeightLayout::kInOut, kSet));
      // ln2 = LN(res2): dresidual_ becomes d res2
      POTOP_PROFILED("layernorm", layernorm_backward(dresidual_, g.ln2_w, g.ln2_b, dbtc2_, a.res2, w.ln2_w, a.ln2_mean, a.ln2_rstd, BT, C));
    } else {
      POTOP_PROFILED("fc", linear_backward(d_mlp_in, g.fc_w, nullptr, dfch_, a.ln1, w.fc_w, BT, C, 4 * C));
      // ln1 = LN(res2): dresidual_ becomes d res2
      zero(dresidual_, btc);
      POTOP_PROFILED("layernorm", layernorm_backward(dresidual_, g.ln1_w, g.ln1_b, d_mlp_in, a.res2, w.ln1_w, a.ln1_mean, a.ln1_rstd, BT, C));
    }
    // res2 = x + dropout(atty·W + b): d x starts as d res2 (dresidual_)
    const float* dattproj = through_dropout(dbtc_, dresidual_, 2 + 3 * l);
    POTOP_PROFILED("attn proj", linear_backward(dbtc2_, g.attproj_w, g.attproj_b, dattproj, a.atty, w.attproj_w, BT, C, C, WeightLayout::kInOut, kSet));
    // atty = softmax(qkᵀ/√d)·v
    POTOP_PROFILED("attention", attention_backward(dqkv_, dqkv_ + C, dqkv_ + 2 * C, dbtc2_, a.att_stats, a.qkv, a.qkv + C, a.qkv + 2 * C,
                                                   dims, causal, p, dropout_site_seed(dropout_seed_, 1 + 3 * l), kSet));
    // [q k v] = in·W + b
    if (pre) {
      POTOP_PROFILED("qkv", linear_backward(dbtc_, g.qkv_w, g.qkv_b, dqkv_, a.ln1, w.qkv_w, BT, C, 3 * C, WeightLayout::kInOut, kSet));
      // ln1 = LN(x)
      POTOP_PROFILED("layernorm", layernorm_backward(dresidual_, g.ln1_w, g.ln1_b, dbtc_, x, w.ln1_w, a.ln1_mean, a.ln1_rstd, BT, C));
    } else {
      POTOP_PROFILED("qkv", linear_backward(dresidual_, g.qkv_w, g.qkv_b, dqkv_, x, w.qkv_w, BT, C, 3 * C));
    }
  }
  // x = dropout(wte[tok] + wpe[t])
  const float* dencoded = through_dropout(dbtc_, dresidual_, 0);
  POTOP_PROFILED("embedding", embedding_backward(g_.wte, g_.wpe, dencoded, tokens_, B, T, C));
}

}  // namespace potop
