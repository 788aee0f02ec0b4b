// GPT forward and backward. Each line is one kernel call; the backward is the forward read
// bottom-up, each step quoting the line it differentiates.
#include "model/gpt.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/rng.h"
#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/dropout.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "kernels/residual.h"
#include "kernels/softmax.h"

namespace potop {

namespace {

void zero(float* p, size_t n) { std::memset(p, 0, n * sizeof(float)); }

}  // namespace

uint64_t dropout_site_seed(uint64_t step_seed, int site) { return hash64(step_seed, static_cast<uint64_t>(site)); }

GPT::GPT(const GPTConfig& config) : config_(config), layout_(gpt_parameter_layout(config)), params_(layout_) {
  config_.validate();
  p_ = bind_gpt_params(config_, layout_, params_);
  if (config_.positions == PositionEncoding::kSinusoidal) {
    sinusoid_.resize(static_cast<size_t>(config_.block_size) * config_.n_embd);
    sinusoidal_positions(sinusoid_.data(), config_.block_size, config_.n_embd);
  }
}

void GPT::init_weights(uint64_t seed) {
  Rng rng(seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * config_.n_layer);
  for (const TensorSpec& spec : layout_.specs()) {
    float* w = params_.at(spec);
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

void GPT::zero_grad() { grads().zero(); }

void GPT::reserve(int B, int T, int Tk) {
  POTOP_CHECK(B > 0 && T > 0 && T <= config_.block_size && Tk >= T && Tk <= config_.block_size,
              "batch shape out of range");
  const int64_t C = config_.n_embd, H = config_.n_head, V = config_.vocab_size;
  const int64_t BT = int64_t{B} * T, att_floats = int64_t{B} * H * T * Tk;
  B_ = B, T_ = T;
  has_forward_ = false;
  // Every buffer is row-major over (b, t) rows, so buffers sized for more rows serve any
  // smaller batch shape: only grow.
  if (BT <= capacity_rows_ && att_floats <= capacity_att_) return;
  capacity_rows_ = std::max<int64_t>(BT, capacity_rows_);
  capacity_att_ = std::max<int64_t>(att_floats, capacity_att_);
  const int64_t R = capacity_rows_;
  Layout acts;
  const size_t encoded = acts.add("encoded", {R, C});
  struct Ids { size_t ln1, ln1_mean, ln1_rstd, qkv, att, atty, attproj, res2, ln2, ln2_mean, ln2_rstd, fch, fch_act, fcproj, res3; };
  std::vector<Ids> ids;
  for (int l = 0; l < config_.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    ids.push_back(Ids{acts.add(h + "ln1", {R, C}), acts.add(h + "ln1_mean", {R}), acts.add(h + "ln1_rstd", {R}),
                      acts.add(h + "qkv", {R, 3 * C}), acts.add(h + "att", {capacity_att_}), acts.add(h + "atty", {R, C}),
                      acts.add(h + "attproj", {R, C}), acts.add(h + "res2", {R, C}), acts.add(h + "ln2", {R, C}),
                      acts.add(h + "ln2_mean", {R}), acts.add(h + "ln2_rstd", {R}), acts.add(h + "fch", {R, 4 * C}),
                      acts.add(h + "fch_act", {R, 4 * C}), acts.add(h + "fcproj", {R, C}), acts.add(h + "res3", {R, C})});
  }
  const size_t lnf = acts.add("lnf", {R, C}), lnf_mean = acts.add("lnf_mean", {R}), lnf_rstd = acts.add("lnf_rstd", {R});
  const size_t logits = acts.add("logits", {R, V}), probs = acts.add("probs", {R, V}), losses = acts.add("losses", {R});
  Layout scratch;
  const size_t dresidual = scratch.add("dresidual", {R, C}), dbtc = scratch.add("dbtc", {R, C}),
               dbtc2 = scratch.add("dbtc2", {R, C}), dqkv = scratch.add("dqkv", {R, 3 * C}),
               dfch = scratch.add("dfch", {R, 4 * C}), dfch_act = scratch.add("dfch_act", {R, 4 * C}),
               dlosses = scratch.add("dlosses", {R});
  act_arena_ = Arena(acts);
  // The backward scratch is allocated on the first backward pass: generation never needs it.
  scratch_ = Arena();
  auto a = [&](size_t i) { return act_arena_.at(acts.specs()[i]); };
  encoded_ = a(encoded);
  acts_.clear();
  for (const Ids& i : ids) {
    acts_.push_back(BlockActivations{a(i.ln1), a(i.ln1_mean), a(i.ln1_rstd), a(i.qkv), a(i.att), a(i.atty),
                                     a(i.attproj), a(i.res2), a(i.ln2), a(i.ln2_mean), a(i.ln2_rstd), a(i.fch),
                                     a(i.fch_act), a(i.fcproj), a(i.res3)});
  }
  lnf_ = a(lnf), lnf_mean_ = a(lnf_mean), lnf_rstd_ = a(lnf_rstd);
  logits_ = a(logits), probs_ = a(probs), losses_ = a(losses);
  act_layout_ = std::move(acts);
  scratch_layout_ = std::move(scratch);
  scratch_ids_ = {dresidual, dbtc, dbtc2, dqkv, dfch, dfch_act, dlosses};
}

void GPT::bind_scratch() {
  if (!scratch_.data()) scratch_ = Arena(scratch_layout_);
  auto s = [&](size_t i) { return scratch_.at(scratch_layout_.specs()[i]); };
  dresidual_ = s(scratch_ids_[0]), dbtc_ = s(scratch_ids_[1]), dbtc2_ = s(scratch_ids_[2]), dqkv_ = s(scratch_ids_[3]),
  dfch_ = s(scratch_ids_[4]), dfch_act_ = s(scratch_ids_[5]), dlosses_ = s(scratch_ids_[6]);
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

KVCache::KVCache(const GPTConfig& c)
    : k(size_t(c.n_layer) * c.block_size * c.n_embd), v(size_t(c.n_layer) * c.block_size * c.n_embd) {}

float GPT::forward(const int* tokens, const int* targets, int B, int T, bool training, uint64_t dropout_seed,
                   KVCache* cache) {
  const int pos0 = cache ? cache->length : 0;
  POTOP_CHECK(!cache || (B == 1 && !targets && !training), "a KV cache is for batch-1 generation");
  POTOP_CHECK(pos0 + T <= config_.block_size, "context longer than block_size");
  reserve(B, T, pos0 + T);
  const int C = config_.n_embd, V = config_.vocab_size, BT = B * T;
  const size_t btc = static_cast<size_t>(BT) * C;
  const float p = training ? config_.dropout : 0.0f;
  const bool pre = config_.norm == NormPlacement::kPre;
  const float* positions = config_.positions == PositionEncoding::kLearned ? p_.wpe : sinusoid_.data();
  const int Tk = pos0 + T;  // keys: the cached positions, then this call's
  const AttentionDims dims{B, T, Tk, config_.n_head, config_.head_size(), 3 * C, cache ? C : 3 * C, cache ? C : 3 * C};
  const AttentionMask causal{MaskKind::kCausal, nullptr};
  tokens_ = tokens, targets_ = targets, training_ = training, dropout_seed_ = dropout_seed;

  embedding_forward(encoded_, tokens, p_.wte, positions, B, T, C, pos0);      // x = wte[tok] + wpe[t]
  dropout_forward(encoded_, encoded_, p, dropout_site_seed(dropout_seed, 0), btc);
  for (int l = 0; l < config_.n_layer; ++l) {
    const BlockParams& w = p_.h[l];
    const BlockActivations& a = acts_[l];
    const float* x = block_input(l);
    const float* attn_in = x;
    if (pre) {
      layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, x, w.ln1_w, w.ln1_b, BT, C);  // ln1 = LN(x)
      attn_in = a.ln1;
    }
    linear_forward(a.qkv, attn_in, w.qkv_w, w.qkv_b, BT, C, 3 * C);               // [q k v] = in·W + b
    const float* k = a.qkv + C;
    const float* v = a.qkv + 2 * C;
    if (cache) {  // append this call's keys and values, then attend over all of them
      float* k_cache = cache->k.data() + size_t(l) * config_.block_size * C;
      float* v_cache = cache->v.data() + size_t(l) * config_.block_size * C;
      for (int t = 0; t < T; ++t) {
        std::memcpy(k_cache + size_t(pos0 + t) * C, a.qkv + size_t(t) * 3 * C + C, C * sizeof(float));
        std::memcpy(v_cache + size_t(pos0 + t) * C, a.qkv + size_t(t) * 3 * C + 2 * C, C * sizeof(float));
      }
      k = k_cache, v = v_cache;
    }
    attention_forward(a.atty, a.att, a.qkv, k, v, dims, causal, p,
                      dropout_site_seed(dropout_seed, 1 + 3 * l));                  // softmax(qkᵀ/√d)·v
    linear_forward(a.attproj, a.atty, w.attproj_w, w.attproj_b, BT, C, C);         // heads -> C
    dropout_forward(a.attproj, a.attproj, p, dropout_site_seed(dropout_seed, 2 + 3 * l), btc);
    residual_forward(a.res2, x, a.attproj, btc);                                    // res2 = x + attn
    float* mlp_in;
    if (pre) {
      layernorm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.res2, w.ln2_w, w.ln2_b, BT, C);  // ln2 = LN(res2)
      mlp_in = a.ln2;
    } else {
      layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, a.res2, w.ln1_w, w.ln1_b, BT, C);  // ln1 = LN(res2)
      mlp_in = a.ln1;
    }
    linear_forward(a.fch, mlp_in, w.fc_w, w.fc_b, BT, C, 4 * C);                   // fch = in·W₁ + b₁
    if (config_.activation == Activation::kGelu) gelu_forward(a.fch_act, a.fch, size_t(BT) * 4 * C);
    else relu_forward(a.fch_act, a.fch, size_t(BT) * 4 * C);                        // act = f(fch)
    linear_forward(a.fcproj, a.fch_act, w.fcproj_w, w.fcproj_b, BT, 4 * C, C);     // act·W₂ + b₂
    dropout_forward(a.fcproj, a.fcproj, p, dropout_site_seed(dropout_seed, 3 + 3 * l), btc);
    residual_forward(a.res3, pre ? a.res2 : a.ln1, a.fcproj, btc);                  // res3 = in + mlp
    if (!pre) layernorm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.res3, w.ln2_w, w.ln2_b, BT, C);  // ln2 = LN(res3)
  }
  const float* head_in = block_output(config_.n_layer - 1);
  if (pre) {
    layernorm_forward(lnf_, lnf_mean_, lnf_rstd_, head_in, p_.lnf_w, p_.lnf_b, BT, C);  // lnf = LN(x)
    head_in = lnf_;
  }
  linear_forward(logits_, head_in, p_.wte, nullptr, BT, C, V, WeightLayout::kOutIn);  // logits = x·wteᵀ
  if (cache) cache->length += T;
  has_forward_ = targets != nullptr;
  counted_ = 0;
  if (!targets) return 0.0f;
  crossentropy_forward(losses_, probs_, logits_, targets, BT, V);
  double sum = 0;
  for (int i = 0; i < BT; ++i) {
    if (targets[i] >= 0) sum += losses_[i], ++counted_;
  }
  return counted_ ? static_cast<float>(sum / counted_) : 0.0f;
}

void GPT::backward(float loss_scale) {
  POTOP_CHECK(has_forward_, "backward() needs a forward() with targets first");
  grads();
  bind_scratch();
  const int B = B_, T = T_, C = config_.n_embd, V = config_.vocab_size, BT = B * T;
  const size_t btc = static_cast<size_t>(BT) * C, bt4c = btc * 4;
  const float p = training_ ? config_.dropout : 0.0f;
  const bool pre = config_.norm == NormPlacement::kPre;
  const AttentionDims dims{B, T, T, config_.n_head, config_.head_size(), 3 * C, 3 * C, 3 * C};
  const AttentionMask causal{MaskKind::kCausal, nullptr};
  // d(dropout(x)) -> dx, into a zeroed scratch buffer; without dropout the gradient passes as is.
  auto through_dropout = [&](float* scratch, const float* dout, int site) -> const float* {
    if (p == 0.0f) return dout;
    zero(scratch, btc);
    dropout_backward(scratch, dout, p, dropout_site_seed(dropout_seed_, site), btc);
    return scratch;
  };
  auto activation_backward = [&](float* dinp, const float* dout, const float* inp) {
    if (config_.activation == Activation::kGelu) gelu_backward(dinp, dout, inp, bt4c);
    else relu_backward(dinp, dout, inp, bt4c);
  };

  // loss = Σ losses / counted
  const float dloss = counted_ ? loss_scale / static_cast<float>(counted_) : 0.0f;
  for (int i = 0; i < BT; ++i) dlosses_[i] = targets_[i] >= 0 ? dloss : 0.0f;
  float* dlogits = probs_;
  crossentropy_backward(dlogits, probs_, targets_, dlosses_, BT, V);
  // logits = x·wteᵀ
  const float* x_last = block_output(config_.n_layer - 1);
  zero(dresidual_, btc);
  if (pre) {
    zero(dbtc_, btc);
    linear_backward(dbtc_, g_.wte, nullptr, dlogits, lnf_, p_.wte, BT, C, V, WeightLayout::kOutIn);
    // lnf = LN(x)
    layernorm_backward(dresidual_, g_.lnf_w, g_.lnf_b, dbtc_, x_last, p_.lnf_w, lnf_mean_, lnf_rstd_, BT, C);
  } else {
    linear_backward(dresidual_, g_.wte, nullptr, dlogits, x_last, p_.wte, BT, C, V, WeightLayout::kOutIn);
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
      layernorm_backward(dbtc2_, g.ln2_w, g.ln2_b, dresidual_, a.res3, w.ln2_w, a.ln2_mean, a.ln2_rstd, BT, C);
      d_res3 = d_mlp_in = dbtc2_;  // res3 = ln1 + mlp, so d ln1 starts as d res3
    }
    // fcproj = dropout(act·W₂ + b₂)
    const float* dfcproj = through_dropout(dbtc_, d_res3, 3 + 3 * l);
    zero(dfch_act_, bt4c);
    linear_backward(dfch_act_, g.fcproj_w, g.fcproj_b, dfcproj, a.fch_act, w.fcproj_w, BT, 4 * C, C);
    // act = f(fch)
    zero(dfch_, bt4c);
    activation_backward(dfch_, dfch_act_, a.fch);
    // fch = in·W₁ + b₁
    if (pre) {
      zero(dbtc2_, btc);
      linear_backward(dbtc2_, g.fc_w, g.fc_b, dfch_, a.ln2, w.fc_w, BT, C, 4 * C);
      // ln2 = LN(res2): dresidual_ becomes d res2
      layernorm_backward(dresidual_, g.ln2_w, g.ln2_b, dbtc2_, a.res2, w.ln2_w, a.ln2_mean, a.ln2_rstd, BT, C);
    } else {
      linear_backward(d_mlp_in, g.fc_w, g.fc_b, dfch_, a.ln1, w.fc_w, BT, C, 4 * C);
      // ln1 = LN(res2): dresidual_ becomes d res2
      zero(dresidual_, btc);
      layernorm_backward(dresidual_, g.ln1_w, g.ln1_b, d_mlp_in, a.res2, w.ln1_w, a.ln1_mean, a.ln1_rstd, BT, C);
    }
    // res2 = x + dropout(atty·W + b): d x starts as d res2 (dresidual_)
    const float* dattproj = through_dropout(dbtc_, dresidual_, 2 + 3 * l);
    zero(dbtc2_, btc);
    linear_backward(dbtc2_, g.attproj_w, g.attproj_b, dattproj, a.atty, w.attproj_w, BT, C, C);
    // atty = softmax(qkᵀ/√d)·v
    zero(dqkv_, btc * 3);
    attention_backward(dqkv_, dqkv_ + C, dqkv_ + 2 * C, dbtc2_, a.att, a.qkv, a.qkv + C, a.qkv + 2 * C, dims, causal,
                       p, dropout_site_seed(dropout_seed_, 1 + 3 * l));
    // [q k v] = in·W + b
    if (pre) {
      zero(dbtc_, btc);
      linear_backward(dbtc_, g.qkv_w, g.qkv_b, dqkv_, a.ln1, w.qkv_w, BT, C, 3 * C);
      // ln1 = LN(x)
      layernorm_backward(dresidual_, g.ln1_w, g.ln1_b, dbtc_, x, w.ln1_w, a.ln1_mean, a.ln1_rstd, BT, C);
    } else {
      linear_backward(dresidual_, g.qkv_w, g.qkv_b, dqkv_, x, w.qkv_w, BT, C, 3 * C);
    }
  }
  // x = dropout(wte[tok] + wpe[t])
  const float* dencoded = through_dropout(dbtc_, dresidual_, 0);
  embedding_backward(g_.wte, g_.wpe, dencoded, tokens_, B, T, C);
}

}  // namespace potop
