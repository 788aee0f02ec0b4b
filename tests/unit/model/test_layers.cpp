// The sub-layers composed by a residual stack, as an encoder and a decoder of the original
// Transformer would compose them (the GPT uses the same layers; test_torch_parity.cpp checks it
// whole): masked self-attention, self-attention with a padding mask, cross-attention over a second
// sequence with its own padding mask, and the MLP, under pre-LN and post-LN Add & Norm.
//
// Each stack is checked against PyTorch (tests/torch/layer_reference.py) on identical weights —
// the output, the gradients of both input sequences and of every parameter — and against central
// finite differences of L = Σ w ⊙ out on a sample of elements.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/safetensors.h"
#include "nn/attention_layer.h"
#include "nn/mlp_layer.h"
#include "nn/residual_stack.h"
#include "support/testing.h"
#include "support/torch_oracle.h"
#include "unit/kernels/kernel_testing.h"

namespace potop {
namespace {

struct StackCase {
  std::string name;
  NormPlacement norm = NormPlacement::kPre;
  bool causal = true;       // the self-attention's look-ahead mask
  bool padding = false;     // the self-attention's keys are padded (lengths)
  bool cross = false;       // a cross-attention sub-layer over the memory (padded by memory_lengths)
  Activation activation = Activation::kGelu;
  int B = 2, T = 5, S = 4, C = 12, H = 3;
  std::vector<int> lengths{5, 3}, memory_lengths{4, 2};
};

// A stack built the way a model builds it, with its own parameters and buffers.
struct Stack {
  explicit Stack(const StackCase& stack_case) : c(stack_case) {
    stack = std::make_unique<ResidualStack>(b, c.norm, c.C);
    auto attention = [&](const std::string& prefix, bool causal, bool cross) {
      return std::make_unique<AttentionLayer>(b, prefix, AttentionConfig{c.C, c.H, true, causal, cross, 0.02});
    };
    const LayerNormParams ln1(b, "s.ln_1", c.C, true);
    stack->add(b, ln1, attention("s.attn", c.causal, false));
    describe("attention", "s.attn", "s.ln_1", c.causal, false, c.padding);
    if (c.cross) {
      const LayerNormParams ln(b, "s.ln_cross_attn", c.C, true);
      stack->add(b, ln, attention("s.crossattention", false, true));
      describe("attention", "s.crossattention", "s.ln_cross_attn", false, true, true);
    }
    const LayerNormParams ln2(b, "s.ln_2", c.C, true);
    stack->add(b, ln2, std::make_unique<MlpLayer>(b, "s.mlp", MlpConfig{c.C, 4 * c.C, c.activation, true, 0.02}));
    describe("mlp", "s.mlp", "s.ln_2", false, false, false);
    if (c.norm == NormPlacement::kPre) stack->set_final_norm(b, LayerNormParams(b, "ln_f", c.C, true));
    params = ParameterSet(b.params);
    acts = Activations(std::shared_ptr<const ActivationPlan>(std::shared_ptr<void>(), &b.acts));
    acts.reserve(int64_t{c.B} * c.T, int64_t{c.B} * c.S);
  }

  void describe(const char* kind, const char* prefix, const char* norm, bool causal, bool cross, bool padding) {
    sublayers.push_back({{"kind", kind}, {"prefix", prefix}, {"norm", norm}, {"causal", causal}, {"cross", cross},
                         {"padding", padding}});
  }

  LayerPass pass() {
    LayerPass p;
    p.B = c.B, p.T = c.T, p.S = c.S;
    p.lengths = c.padding ? c.lengths.data() : nullptr;
    if (c.cross) p.memory = memory.data(), p.d_memory = d_memory.data(), p.memory_lengths = c.memory_lengths.data();
    return p;
  }
  std::vector<float> forward() {
    const Frame f{params, acts};
    const float* out = stack->forward(x.data(), pass(), f);
    return {out, out + x.size()};
  }
  double loss() {
    const std::vector<float> out = forward();
    return testing::weighted_sum(out.data(), w.data(), out.size());
  }
  // d x, with d memory and the parameter gradients left in their buffers.
  std::vector<float> backward() {
    const Frame f{params, acts};
    forward();
    params.zero_grad();
    std::fill(d_memory.begin(), d_memory.end(), 0.0f);
    acts.reserve_scratch();
    std::copy(w.begin(), w.end(), stack->output_grad(f));
    const ResidualStack::InputGrad d = stack->backward(x.data(), pass(), f);
    return {d.dx, d.dx + x.size()};
  }

  StackCase c;
  LayerBuilder b;
  std::unique_ptr<ResidualStack> stack;
  ParameterSet params;
  Activations acts;
  std::vector<float> x, memory, d_memory, w;
  nlohmann::json sublayers = nlohmann::json::array();
};

// Random inputs, and weights big enough that attention is far from uniform and the non-linearity
// far from linear; biases and LayerNorm parameters perturbed from their init (0 and 1).
void randomise(Stack& s, uint64_t seed) {
  s.params.init(seed);
  Rng rng(seed + 1);
  for (const TensorSpec& spec : s.params.layout().specs()) {
    float* v = s.params.values().at(spec);
    for (size_t i = 0; i < spec.numel; ++i) {
      if (spec.init.kind == TensorInit::Kind::kNormal) v[i] *= 15.0f;
      else v[i] += static_cast<float>(0.2 * rng.normal());
    }
  }
  const size_t n = size_t(s.c.B) * s.c.T * s.c.C, m = size_t(s.c.B) * s.c.S * s.c.C;
  s.x = testing::random_vector(n, seed + 2);
  s.memory = testing::random_vector(m, seed + 3);
  s.d_memory.assign(m, 0.0f);
  s.w = testing::random_vector(n, seed + 4);
}

std::vector<StackCase> cases() {
  std::vector<StackCase> all;
  for (NormPlacement norm : {NormPlacement::kPre, NormPlacement::kPost}) {
    const std::string n = norm == NormPlacement::kPre ? "pre" : "post";
    StackCase decoder{"decoder_" + n, norm};  // masked self-attention, cross-attention, MLP
    decoder.cross = true, decoder.padding = true;
    StackCase encoder{"encoder_" + n, norm};  // self-attention over padded sequences, MLP
    encoder.causal = false, encoder.padding = true, encoder.activation = Activation::kRelu;
    all.push_back(decoder);
    all.push_back(encoder);
  }
  return all;
}

TEST(Layers, StacksMatchPyTorch) {
  std::vector<std::unique_ptr<Stack>> stacks;
  for (const StackCase& c : cases()) {
    stacks.push_back(std::make_unique<Stack>(c));
    Stack& s = *stacks.back();
    randomise(s, 11);
    s.forward();
  }
  const testing::TempDir dir("layers_torch");
  std::vector<std::string> args;
  for (auto& sp : stacks) {
    Stack& s = *sp;
    const StackCase& c = s.c;
    std::vector<SafetensorsEntry> in{{"x", Dtype::F32, {c.B, c.T, c.C}, s.x.data()},
                                     {"memory", Dtype::F32, {c.B, c.S, c.C}, s.memory.data()},
                                     {"lengths", Dtype::I32, {c.B}, c.lengths.data()},
                                     {"memory_lengths", Dtype::I32, {c.B}, c.memory_lengths.data()},
                                     {"dout", Dtype::F32, {c.B, c.T, c.C}, s.w.data()}};
    for (const TensorSpec& spec : s.params.layout().specs())
      in.push_back({spec.name, Dtype::F32, spec.shape, s.params.values().at(spec)});
    const nlohmann::json spec = {{"norm", c.norm == NormPlacement::kPre ? "pre" : "post"},
                                 {"n_head", c.H},
                                 {"activation", c.activation == Activation::kGelu ? "gelu" : "relu"},
                                 {"final_norm", c.norm == NormPlacement::kPre ? nlohmann::json("ln_f") : nlohmann::json()},
                                 {"sublayers", s.sublayers}};
    write_safetensors(dir / (c.name + ".in.safetensors"), in, {{"potop.stack", spec.dump()}});
    args.push_back((dir / (c.name + ".in.safetensors")).string());
    args.push_back((dir / (c.name + ".ref.safetensors")).string());
  }
  const int rc = testing::run_python("tests/torch/layer_reference.py", args);
  ASSERT_EQ(rc, 0) << "tests/torch/layer_reference.py failed (exit " << rc << ")";

  for (auto& sp : stacks) {
    Stack& s = *sp;
    const StackCase& c = s.c;
    const SafetensorsFile ref(dir / (c.name + ".ref.safetensors"));
    std::printf("[%s]\n", c.name.c_str());
    testing::DiffReport forward(c.name + " output", 1e-11);
    forward.add("out", s.forward(), ref.f32("out"));
    forward.check();
    const std::vector<float> dx = s.backward();
    testing::DiffReport grads(c.name + " gradients", 1e-10);
    grads.add("dx", dx, ref.f32("dx"));
    if (c.cross) grads.add("dmemory", s.d_memory, ref.f32("dmemory"));
    for (const TensorSpec& spec : s.params.layout().specs())
      grads.add("grad." + spec.name, {s.params.grads().at(spec), spec.numel}, ref.f32("grad." + spec.name));
    grads.check();
  }
}

TEST(Layers, StackGradientsMatchFiniteDifferences) {
  for (StackCase c : cases()) {
    SCOPED_TRACE(c.name);
    c.activation = Activation::kGelu;  // smooth: a finite difference across ReLU's kink means nothing
    Stack s(c);
    randomise(s, 23);
    const std::vector<float> dx = s.backward();
    const std::vector<float> dmemory = s.d_memory;
    std::vector<float> dparams(s.params.grads().data(), s.params.grads().data() + s.params.grads().floats());
    auto loss = [&] { return s.loss(); };
    // Every input element; the parameters' through a sample of each tensor.
    EXPECT_TRUE(testing::gradient_matches(loss, s.x.data(), dx.data(), dx.size(), 1e-2f, 2e-3, 2e-2));
    if (c.cross) {
      EXPECT_TRUE(testing::gradient_matches(loss, s.memory.data(), dmemory.data(), dmemory.size(), 1e-2f, 2e-3, 2e-2));
    }
    for (const TensorSpec& spec : s.params.layout().specs()) {
      SCOPED_TRACE(spec.name);
      float* v = s.params.values().at(spec);
      const float* g = dparams.data() + spec.offset;
      for (size_t i = 0; i < spec.numel; i += std::max<size_t>(1, spec.numel / 7))
        EXPECT_TRUE(testing::gradient_matches(loss, v + i, g + i, 1, 1e-2f, 2e-3, 2e-2)) << "element " << i;
    }
  }
}

// Padding and causality are exact: what a masked key holds never changes a visible output.
TEST(Layers, MaskedPositionsDoNotLeak) {
  for (const StackCase& c : cases()) {
    SCOPED_TRACE(c.name);
    Stack s(c);
    randomise(s, 5);
    const std::vector<float> before = s.forward();
    // The last position of sequence 1 is padding (length 3 < T) for the self-attention; its
    // memory's last positions are padding too (length 2 < S).
    for (int t = c.lengths[1]; t < c.T; ++t)
      for (int i = 0; i < c.C; ++i) s.x[(size_t(c.T) + t) * c.C + i] += 5.0f;
    for (int t = c.memory_lengths[1]; t < c.S; ++t)
      for (int i = 0; i < c.C; ++i) s.memory[(size_t(c.S) + t) * c.C + i] -= 7.0f;
    const std::vector<float> after = s.forward();
    for (int b = 0; b < c.B; ++b)
      for (int t = 0; t < std::min(c.T, c.lengths[b]); ++t)
        for (int i = 0; i < c.C; ++i) {
          const size_t k = (size_t(b) * c.T + t) * c.C + i;
          ASSERT_EQ(before[k], after[k]) << "sequence " << b << " position " << t;
        }
  }
}

}  // namespace
}  // namespace potop
