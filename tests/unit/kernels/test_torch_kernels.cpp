// Every kernel against its PyTorch equivalent (tests/torch/kernel_reference.py): the test draws
// random inputs and upstream gradients, runs potop's forward and backward, writes the inputs to
// one safetensors file, lets PyTorch recompute the outputs and (by autograd) the input gradients
// from the same inputs, and compares. Dropout is not here: its counter-based mask cannot match
// torch's RNG (test_dropout.cpp and the finite-difference tests cover it).
//
// Both sides run in float32 with different operation orders, so they agree to rounding: NMSE
// (Σ(a-b)²/Σb²) below 1e-10 where a semantic slip (a missing scale, a masked key leaking, a
// wrong layout) costs 1e-4 or more.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/safetensors.h"
#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "kernels/optimizer.h"
#include "kernels/residual.h"
#include "kernels/softmax.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "kernels/swiglu.h"
#include "support/testing.h"
#include "support/torch_oracle.h"

namespace potop {
namespace {

using testing::DiffReport;

constexpr double kNmse = 1e-10;

// Named tensors in insertion order, F32 or I32.
class Bundle {
 public:
  std::vector<float>& f32(const std::string& name, const Shape& shape) {
    Entry& e = add(name, shape, Dtype::F32);
    e.f.assign(shape_numel(shape), 0.0f);
    return e.f;
  }
  std::vector<int>& i32(const std::string& name, const Shape& shape) {
    Entry& e = add(name, shape, Dtype::I32);
    e.i.assign(shape_numel(shape), 0);
    return e.i;
  }
  const std::vector<std::string>& names() const { return order_; }
  const std::vector<float>& f32(const std::string& name) const { return entries_.at(name).f; }
  std::vector<SafetensorsEntry> entries() const {
    std::vector<SafetensorsEntry> out;
    for (const std::string& n : order_) {
      const Entry& e = entries_.at(n);
      out.push_back({n, e.dtype, e.shape, e.dtype == Dtype::F32 ? static_cast<const void*>(e.f.data()) : e.i.data()});
    }
    return out;
  }

 private:
  struct Entry {
    Shape shape;
    Dtype dtype;
    std::vector<float> f;
    std::vector<int> i;
  };
  Entry& add(const std::string& name, const Shape& shape, Dtype dtype) {
    EXPECT_FALSE(entries_.count(name)) << "duplicate tensor " << name;
    order_.push_back(name);
    Entry& e = entries_[name];
    e.shape = shape, e.dtype = dtype;
    return e;
  }
  std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;
};

// All cases: inputs for PyTorch, potop's results, and what each case is. A case's tensors are
// named "<case>.<tensor>" after the case begun last, never by the caller, so a case cannot file
// its results under another case's name; each case keeps the list of results it produced, and
// the comparison walks those lists (never a name prefix).
struct Cases {
  Bundle inputs, results;
  nlohmann::json meta = nlohmann::json::object();
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> outputs;  // case -> its results, full names
  uint64_t seed = 100;

  void begin(const std::string& name, nlohmann::json params) {
    // kernel_reference.py gives a case the inputs named "<case>.*": a dot in a case name would
    // let one case's prefix take another's tensors.
    EXPECT_EQ(name.find('.'), std::string::npos) << "case name " << name << " contains a dot";
    EXPECT_FALSE(meta.contains(name)) << "duplicate case " << name;
    order.push_back(name);
    meta[name] = std::move(params);
  }
  // A random N(0, scale²) input of the current case.
  std::vector<float>& in(const std::string& name, const Shape& shape, float scale = 1.0f) {
    auto& v = inputs.f32(current() + "." + name, shape);
    v = testing::random_vector(v.size(), seed++, scale);
    return v;
  }
  std::vector<int>& in_i32(const std::string& name, const Shape& shape) {
    return inputs.i32(current() + "." + name, shape);
  }
  // A result of the current case, compared with the reference tensor of the same name.
  std::vector<float>& out(const std::string& name, const Shape& shape) {
    const std::string full = current() + "." + name;
    outputs[current()].push_back(full);
    return results.f32(full, shape);
  }

 private:
  const std::string& current() const {
    EXPECT_FALSE(order.empty()) << "a tensor before the first begin()";
    static const std::string none = "(no case)";
    return order.empty() ? none : order.back();
  }
};

void linear_case(Cases& k, const std::string& c, WeightLayout layout, bool bias, int N, int C, int OC) {
  k.begin(c, {{"kernel", "linear"}, {"layout", layout == WeightLayout::kInOut ? "in_out" : "out_in"}});
  const Shape wshape = layout == WeightLayout::kInOut ? Shape{C, OC} : Shape{OC, C};
  auto& inp = k.in("inp", {N, C});
  auto& w = k.in("weight", wshape, 0.2f);
  const float* b = bias ? k.in("bias", {OC}).data() : nullptr;
  auto& dout = k.in("dout", {N, OC});
  linear_forward(k.out("out", {N, OC}).data(), inp.data(), w.data(), b, N, C, OC, layout);
  float* db = bias ? k.out("dbias", {OC}).data() : nullptr;
  linear_backward(k.out("dinp", {N, C}).data(), k.out("dweight", wshape).data(), db, dout.data(), inp.data(),
                  w.data(), N, C, OC, layout);
}

void embedding_case(Cases& k, const std::string& c, int pos0, bool backward, float scale = 1.0f) {
  const int B = 3, T = 5, V = 11, C = 20, P = 9;  // P > pos0 + T positions in the table
  k.begin(c, {{"kernel", "embedding"}, {"pos0", pos0}, {"scale", scale}});
  auto& tokens = k.in_i32("tokens", {B, T});
  Rng rng(k.seed++);
  for (int& t : tokens) t = static_cast<int>(rng.below(V / 2));  // repeated tokens: dwte rows accumulate
  auto& wte = k.in("wte", {V, C});
  auto& wpe = k.in("wpe", {P, C});
  embedding_forward(k.out("out", {B, T, C}).data(), tokens.data(), wte.data(), wpe.data(), B, T, C, pos0,
                    scale);
  if (!backward) return;
  auto& dout = k.in("dout", {B, T, C});
  embedding_backward(k.out("dwte", {V, C}).data(), k.out("dwpe", {P, C}).data(), dout.data(), tokens.data(), B,
                     T, C, scale);
}

void sinusoidal_case(Cases& k, const std::string& c, int T, int C) {
  k.begin(c, {{"kernel", "sinusoidal"}, {"T", T}, {"C", C}});
  sinusoidal_positions(k.out("table", {T, C}).data(), T, C);
}

void layernorm_case(Cases& k, const std::string& c, bool bias, int N, int C, float eps = kLayerNormEps) {
  k.begin(c, {{"kernel", "layernorm"}, {"eps", eps}});
  auto& inp = k.in("inp", {N, C}, 3.0f);
  for (size_t i = 0; i < inp.size(); ++i) inp[i] += 2.0f;  // a mean far from 0
  auto& w = k.in("weight", {C}, 0.5f);
  for (float& x : w) x += 1.0f;
  const float* b = bias ? k.in("bias", {C}, 0.5f).data() : nullptr;
  auto& dout = k.in("dout", {N, C});
  auto& mean = k.out("mean", {N});
  auto& rstd = k.out("rstd", {N});
  layernorm_forward(k.out("out", {N, C}).data(), mean.data(), rstd.data(), inp.data(), w.data(), b, N, C, eps);
  float* db = bias ? k.out("dbias", {C}).data() : nullptr;
  layernorm_backward(k.out("dinp", {N, C}).data(), k.out("dweight", {C}).data(), db, dout.data(), inp.data(),
                     w.data(), mean.data(), rstd.data(), N, C);
}

void activation_case(Cases& k, const std::string& c, const std::string& fn, size_t n) {
  k.begin(c, {{"kernel", "activation"}, {"fn", fn}});
  auto& inp = k.in("inp", {int64_t(n)}, 3.0f);
  for (size_t i = 0; i < n; i += 17) inp[i] = 0.0f;  // the kink of ReLU: both say slope 0
  inp[1] = 12.0f, inp[2] = -12.0f;                    // GELU's saturated tails
  auto& dout = k.in("dout", {int64_t(n)});
  auto& out = k.out("out", {int64_t(n)});
  auto& dinp = k.out("dinp", {int64_t(n)});
  if (fn == "gelu") {
    gelu_forward(out.data(), inp.data(), n);
    gelu_backward(dinp.data(), dout.data(), inp.data(), n);
  } else if (fn == "gelu_erf") {
    gelu_erf_forward(out.data(), inp.data(), n);
    gelu_erf_backward(dinp.data(), dout.data(), inp.data(), n);
  } else if (fn == "tanh") {
    tanh_forward(out.data(), inp.data(), n);
    tanh_backward(dinp.data(), dout.data(), inp.data(), n);
  } else {
    relu_forward(out.data(), inp.data(), n);
    relu_backward(dinp.data(), dout.data(), inp.data(), n);
  }
}

void residual_case(Cases& k, const std::string& c, size_t n) {
  k.begin(c, {{"kernel", "residual"}});
  auto& a = k.in("a", {int64_t(n)});
  auto& b = k.in("b", {int64_t(n)});
  auto& dout = k.in("dout", {int64_t(n)});
  residual_forward(k.out("out", {int64_t(n)}).data(), a.data(), b.data(), n);
  residual_backward(k.out("da", {int64_t(n)}).data(), k.out("db", {int64_t(n)}).data(), dout.data(), n);
}

void softmax_case(Cases& k, const std::string& c, int N, int V) {
  k.begin(c, {{"kernel", "softmax"}});
  auto& inp = k.in("inp", {N, V}, 4.0f);
  for (int n = 0; n < N; ++n) inp[size_t(n) * V + (n * 7) % V] = -std::numeric_limits<float>::infinity();
  auto& dout = k.in("dout", {N, V});
  auto& out = k.out("out", {N, V});
  softmax_forward(out.data(), inp.data(), N, V);
  softmax_backward(k.out("dinp", {N, V}).data(), dout.data(), out.data(), N, V);
}

void crossentropy_case(Cases& k, const std::string& c, int N, int V, float label_smoothing = 0.0f) {
  k.begin(c, {{"kernel", "crossentropy"}, {"label_smoothing", label_smoothing}});
  auto& logits = k.in("logits", {N, V}, 5.0f);
  auto& targets = k.in_i32("targets", {N});
  Rng rng(k.seed++);
  for (int n = 0; n < N; ++n) targets[n] = n % 4 == 2 ? -1 : static_cast<int>(rng.below(V));
  auto& dlosses = k.in("dlosses", {N});
  auto& probs = k.out("probs", {N, V});
  crossentropy_forward(k.out("losses", {N}).data(), probs.data(), logits.data(), targets.data(), N, V,
                       label_smoothing);
  crossentropy_backward(k.out("dlogits", {N, V}).data(), probs.data(), targets.data(), dlosses.data(), N, V,
                        GradStore::kOverwrite, label_smoothing);
}

// Fused: q, k, v are the three parts of one (B, T, C + 2·Ckv) buffer, as in the model; otherwise
// three contiguous buffers (with Tq < Tk: the last Tq queries against Tk keys, a KV cache). Hkv
// key/value heads of Ckv = Hkv·D columns (0: H, multi-head); the reference repeats them.
void attention_case(Cases& k, const std::string& c, int B, int Tq, int Tk, int H, int D, MaskKind kind,
                    std::vector<int> key_lengths, bool fused, int Hkv = 0) {
  const int C = H * D, Ckv = (Hkv ? Hkv : H) * D;
  k.begin(c, {{"kernel", "attention"}, {"H", H}, {"Hkv", Hkv ? Hkv : H},
              {"mask", kind == MaskKind::kCausal ? "causal" : "none"}});
  const int* lengths = nullptr;
  if (!key_lengths.empty()) {
    auto& l = k.in_i32("key_lengths", {B});
    l = key_lengths;
    lengths = l.data();
  }
  const AttentionMask mask{kind, lengths};
  auto& dout = k.in("dout", {B, Tq, C});
  auto& out = k.out("out", {B, Tq, C});
  auto& att = k.out("att", {B, H, Tq, Tk});
  std::vector<float> stats(static_cast<size_t>(2) * B * H * Tq);
  if (fused) {
    EXPECT_EQ(Tq, Tk);
    const int W = C + 2 * Ckv;
    auto& qkv = k.in("qkv", {B, Tq, W});
    auto& dqkv = k.out("dqkv", {B, Tq, W});
    AttentionDims dims{B, Tq, Tk, H, D, W, W, W};
    dims.Hkv = Hkv;
    attention_forward(out.data(), stats.data(), att.data(), qkv.data(), qkv.data() + C, qkv.data() + C + Ckv, dims,
                      mask);
    attention_backward(dqkv.data(), dqkv.data() + C, dqkv.data() + C + Ckv, dout.data(), stats.data(), qkv.data(),
                       qkv.data() + C, qkv.data() + C + Ckv, dims, mask);
  } else {
    auto& q = k.in("q", {B, Tq, C});
    auto& kk = k.in("k", {B, Tk, Ckv});
    auto& v = k.in("v", {B, Tk, Ckv});
    AttentionDims dims{B, Tq, Tk, H, D, C, Ckv, Ckv};
    dims.Hkv = Hkv;
    attention_forward(out.data(), stats.data(), att.data(), q.data(), kk.data(), v.data(), dims, mask);
    attention_backward(k.out("dq", {B, Tq, C}).data(), k.out("dk", {B, Tk, Ckv}).data(),
                       k.out("dv", {B, Tk, Ckv}).data(), dout.data(), stats.data(), q.data(), kk.data(), v.data(),
                       dims, mask);
  }
}

void adamw_case(Cases& k, const std::string& c, long t, const AdamWHyper& h, double lr, double beta1, double beta2,
                double wd, size_t n) {
  // The JSON carries the decimals the float hyperparameters were written from, as a config would.
  k.begin(c, {{"kernel", "adamw"}, {"t", t}, {"lr", lr}, {"beta1", beta1}, {"beta2", beta2}, {"eps", 1e-8},
              {"weight_decay", wd}});
  const int64_t N = static_cast<int64_t>(n);
  auto& p0 = k.in("params", {N}, 0.1f);
  auto& g = k.in("grads", {N}, 0.01f);
  for (size_t i = 0; i < n; i += 13) g[i] = 0.0f;
  auto& m0 = k.in("m", {N}, t > 1 ? 0.01f : 0.0f);
  auto& v0 = k.in("v", {N}, t > 1 ? 1e-4f : 0.0f);
  for (float& x : v0) x = std::fabs(x);
  auto& p = k.out("params", {N});
  auto& m = k.out("m", {N});
  auto& v = k.out("v", {N});
  p = p0, m = m0, v = v0;
  adamw_update(p.data(), g.data(), m.data(), v.data(), n, h, static_cast<float>(wd), t);
}

void clip_case(Cases& k, const std::string& c, double max_norm) {
  const std::vector<int> sizes{400, 300, 250, 50};
  k.begin(c, {{"kernel", "clip_grad_norm"}, {"max_norm", max_norm}, {"sizes", sizes}});
  auto& g0 = k.in("grads", {1000}, 0.05f);
  auto& g = k.out("grads", {1000});
  g = g0;
  const float norm = static_cast<float>(clip_grad_norm(g.data(), g.size(), max_norm));
  k.out("norm", {}) = {norm};
}

// The Llama's kernels (src/models/llama/) against scripts/torch_llama.py's functions.
// RoPE on the first `heads` heads of rows `stride` apart (the rest of a row, a fused [Q K V]'s V
// heads, passes through), each row at its own position; backward from dout, in place.
void rope_case(Cases& k, const std::string& c, int rows, int stride, int heads, int D, float theta,
               const std::vector<int>& positions) {
  k.begin(c, {{"kernel", "rope"}, {"heads", heads}, {"D", D}, {"theta", theta}});
  auto& pos = k.in_i32("positions", {rows});
  pos = positions;
  auto& x = k.in("x", {rows, stride});
  auto& dout = k.in("dout", {rows, stride});
  const std::vector<float> freq = rope_frequencies(D, theta);
  k.out("frequencies", {D / 2}) = freq;
  auto& out = k.out("out", {rows, stride});
  out = x;
  rope_forward(out.data(), rows, stride, heads, D, pos.data(), freq.data());
  auto& dx = k.out("dx", {rows, stride});
  dx = dout;
  rope_backward(dx.data(), rows, stride, heads, D, pos.data(), freq.data());
}

void rmsnorm_case(Cases& k, const std::string& c, int N, int C, double eps) {
  k.begin(c, {{"kernel", "rmsnorm"}, {"eps", eps}});
  auto& inp = k.in("inp", {N, C}, 3.0f);
  for (float& x : inp) x += 2.0f;  // a mean far from 0, which RMSNorm keeps
  auto& w = k.in("weight", {C}, 0.5f);
  for (float& x : w) x += 1.0f;
  auto& dout = k.in("dout", {N, C});
  auto& rstd = k.out("rstd", {N});
  rmsnorm_forward(k.out("out", {N, C}).data(), rstd.data(), inp.data(), w.data(), N, C, static_cast<float>(eps));
  rmsnorm_backward(k.out("dinp", {N, C}).data(), k.out("dweight", {C}).data(), dout.data(), inp.data(), w.data(),
                   rstd.data(), N, C, GradStore::kOverwrite);
}

void residual_rmsnorm_case(Cases& k, const std::string& c, int N, int C, double eps) {
  k.begin(c, {{"kernel", "residual_rmsnorm"}, {"eps", eps}});
  auto& a = k.in("a", {N, C}, 2.0f);
  auto& b = k.in("b", {N, C});
  auto& w = k.in("weight", {C}, 0.5f);
  residual_rmsnorm_forward(k.out("res", {N, C}).data(), k.out("out", {N, C}).data(), k.out("rstd", {N}).data(),
                           a.data(), b.data(), w.data(), N, C, static_cast<float>(eps));
}

void swiglu_case(Cases& k, const std::string& c, int N, int F) {
  k.begin(c, {{"kernel", "swiglu"}});
  auto& gate_up = k.in("gate_up", {N, 2 * F}, 3.0f);
  gate_up[0] = 30.0f, gate_up[1] = -30.0f;  // silu's saturated tails
  auto& dout = k.in("dout", {N, F});
  swiglu_forward(k.out("out", {N, F}).data(), gate_up.data(), N, F);
  swiglu_backward(k.out("dgate_up", {N, 2 * F}).data(), dout.data(), gate_up.data(), N, F, GradStore::kOverwrite);
}

TEST(TorchKernels, EveryKernelMatchesPyTorch) {
  Cases k;
  linear_case(k, "linear_in_out", WeightLayout::kInOut, true, 37, 64, 96);
  linear_case(k, "linear_in_out_nobias_big", WeightLayout::kInOut, false, 300, 40, 72);
  linear_case(k, "linear_out_in", WeightLayout::kOutIn, true, 29, 48, 23);
  linear_case(k, "linear_out_in_nobias", WeightLayout::kOutIn, false, 64, 32, 67);
  embedding_case(k, "embedding", 0, true);
  embedding_case(k, "embedding_pos0", 4, false);
  embedding_case(k, "embedding_scaled", 0, true, 4.5f);
  sinusoidal_case(k, "sinusoidal", 64, 32);
  sinusoidal_case(k, "sinusoidal_odd", 7, 9);
  layernorm_case(k, "layernorm", true, 150, 48);
  layernorm_case(k, "layernorm_nobias", false, 9, 13);
  layernorm_case(k, "layernorm_eps", true, 9, 13, 0.25f);  // another eps (BERT's 1e-12) is honoured
  activation_case(k, "gelu", "gelu", 5003);
  activation_case(k, "gelu_erf", "gelu_erf", 5003);
  activation_case(k, "relu", "relu", 5003);
  activation_case(k, "tanh", "tanh", 5003);
  residual_case(k, "residual", 1001);
  softmax_case(k, "softmax", 12, 29);
  crossentropy_case(k, "crossentropy", 17, 31);
  crossentropy_case(k, "crossentropy_smoothed", 17, 31, 0.1f);
  attention_case(k, "attention_causal_fused", 2, 9, 9, 3, 8, MaskKind::kCausal, {}, true);
  attention_case(k, "attention_causal_long", 1, 70, 70, 2, 16, MaskKind::kCausal, {}, true);
  attention_case(k, "attention_none", 2, 7, 7, 2, 5, MaskKind::kNone, {}, false);
  attention_case(k, "attention_padding", 3, 6, 6, 2, 16, MaskKind::kNone, {6, 3, 0}, false);
  attention_case(k, "attention_causal_padding", 2, 7, 7, 1, 12, MaskKind::kCausal, {7, 4}, true);
  attention_case(k, "attention_kv_cache", 2, 3, 8, 2, 8, MaskKind::kCausal, {}, false);
  // Grouped-query attention: Hkv key/value heads, each shared by H / Hkv consecutive query heads.
  attention_case(k, "attention_gqa_fused", 2, 9, 9, 4, 8, MaskKind::kCausal, {}, true, 2);
  attention_case(k, "attention_gqa_long", 1, 70, 70, 6, 16, MaskKind::kCausal, {}, true, 2);
  attention_case(k, "attention_mqa_padding", 3, 6, 6, 6, 5, MaskKind::kNone, {6, 3, 0}, false, 1);
  attention_case(k, "attention_gqa_kv_cache", 2, 3, 8, 4, 8, MaskKind::kCausal, {8, 5}, false, 2);
  {
    AdamWHyper h;
    h.lr = 1e-3f, h.beta1 = 0.9f, h.beta2 = 0.99f, h.eps = 1e-8f, h.weight_decay = 0.1f;
    adamw_case(k, "adamw_t1", 1, h, 1e-3, 0.9, 0.99, 0.1, 777);
    h.lr = 3e-3f, h.beta1 = 0.8f, h.beta2 = 0.95f;
    adamw_case(k, "adamw_t7_nodecay", 7, h, 3e-3, 0.8, 0.95, 0.0, 777);
    adamw_case(k, "adamw_t7_decay", 7, h, 3e-3, 0.8, 0.95, 0.1, 777);
  }
  clip_case(k, "clip_grad_norm_clipped", 0.5);  // norm ≈ 0.05 √1000 ≈ 1.6
  clip_case(k, "clip_grad_norm_unclipped", 5.0);
  rope_case(k, "rope_qk_of_fused_qkv", 6, (4 + 2 * 2) * 8, 4 + 2, 8, 10000.0f, {0, 1, 2, 9, 5, 40});
  rope_case(k, "rope_half_odd", 3, 2 * 6, 2, 6, 500.0f, {3, 0, 17});
  {
    std::vector<int> positions(200);  // over the parallel threshold
    for (int r = 0; r < 200; ++r) positions[r] = (r * 37) % 128;
    rope_case(k, "rope_parallel", 200, 4 * 32, 4, 32, 1e6f, positions);
  }
  rmsnorm_case(k, "rmsnorm", 150, 48, 1e-5);
  rmsnorm_case(k, "rmsnorm_odd_eps", 9, 13, 1e-2);
  residual_rmsnorm_case(k, "residual_rmsnorm", 11, 40, 1e-6);
  swiglu_case(k, "swiglu", 17, 45);
  swiglu_case(k, "swiglu_parallel", 100, 200);

  const testing::TempDir dir("torch_kernels");
  write_safetensors(dir / "inputs.safetensors", k.inputs.entries(), {{"potop.kernels", k.meta.dump()}});
  const int rc = testing::run_python("tests/torch/kernel_reference.py",
                                     {(dir / "inputs.safetensors").string(), (dir / "reference.safetensors").string()});
  ASSERT_EQ(rc, 0) << "tests/torch/kernel_reference.py failed (exit " << rc
                   << "); torch is required: run scripts/setup.sh --all";
  const SafetensorsFile ref(dir / "reference.safetensors");

  // Every case compares at least one tensor; every potop result is compared exactly once (each
  // belongs to exactly one case's list); every tensor the reference returned must be one of
  // them: PyTorch computes exactly the outputs potop produces, so an extra name is a typo on one
  // side, never something to ignore.
  std::set<std::string> compared;
  size_t listed = 0;
  for (const std::string& c : k.order) {
    DiffReport report(c, kNmse);
    const std::vector<std::string>& outs = k.outputs[c];
    listed += outs.size();
    for (const std::string& name : outs) {
      if (!ref.has(name)) {
        ADD_FAILURE() << "the reference lacks " << name << ", which potop produced";
        continue;
      }
      report.add(name, k.results.f32(name), ref.f32(name));
      EXPECT_TRUE(compared.insert(name).second) << name << " compared twice";
    }
    report.check();  // fails when the case compared nothing
  }
  EXPECT_EQ(listed, k.results.names().size()) << "a potop result belongs to no case";
  for (const std::string& name : k.results.names())
    EXPECT_TRUE(compared.count(name)) << "potop's " << name << " was never compared";
  for (const std::string& name : ref.names())
    EXPECT_TRUE(compared.count(name)) << "the reference returned " << name << ", which potop did not produce";
}

}  // namespace
}  // namespace potop
