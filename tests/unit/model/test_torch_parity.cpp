// potop's GPT against the PyTorch reference (scripts/torch_gpt.py via tests/torch/gpt_reference.py)
// on identical weights and batch: logits, loss, every parameter gradient, and five AdamW steps
// (each step's loss and the final parameters), for each architectural switch.
//
// Both sides compute in float32 with different summation orders, so results agree to float
// rounding, not bit for bit; errors are NMSE (Σ(a-b)²/Σb², scale-free). Rounding stays near
// 1e-13 (updates 1e-10); a semantic mismatch is orders of magnitude above the bounds: an attention
// scale of 1/D gives 1e-2, erf-GELU 1e-8 in logits, LayerNorm eps 1e-6 instead of 1e-5 1e-8 in
// logits, weight decay on biases and gains 1e-2 in the updates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/model_dir.h"
#include "models/gpt/gpt_kind.h"
#include "core/file_io.h"
#include "core/rng.h"
#include "core/safetensors.h"
#include "models/gpt/gpt.h"
#include "support/testing.h"
#include "support/lm_head_chunks.h"
#include "support/torch_oracle.h"
#include "tokenizer/char_tokenizer.h"
#include "train/adamw.h"
#include "train/batch_parallel.h"
#include "train/train_step.h"

namespace potop {
namespace {

using testing::DiffReport;
using testing::f32_vector;

struct Case {
  std::string name;
  GPTConfig config;
  int B = 3, T = 16;
  double lr = 1e-2, beta1 = 0.9, beta2 = 0.95, weight_decay = 0.1, grad_clip = 1.0;
  int steps = 5;
  int chunk_rows = 0;  // > 0: the LM head takes loss-only passes in chunks of this many rows
};

// Bounds on NMSE per group. Observed on x86-64 / OpenBLAS: ~2e-14 for the forward, ~2e-13 for
// gradients, ~1e-10 for AdamW updates (whose m/√v amplifies rounding in small gradients).
constexpr double kForwardNmse = 1e-11;
constexpr double kGradNmse = 1e-10;
constexpr double kUpdateNmse = 1e-7;

GPTConfig small_config() {
  GPTConfig c;
  c.vocab_size = 23;
  c.block_size = 16;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 32;
  c.dropout = 0.0f;
  return c;
}

// The model's init, spread (support/torch_oracle.h) so that a wrong kernel cannot pass by accident.
void init_model(GPT& model, uint64_t seed) {
  model.init_weights(seed);
  testing::spread_init(model.parameters(), seed);
}

void run_case(const Case& c) {
  const testing::LmHeadChunksGuard chunks(c.chunk_rows, c.config.vocab_size);
  const GPTConfig& config = c.config;
  const int B = c.B, T = c.T, V = config.vocab_size, BT = B * T;
  GPT model(config);
  init_model(model, 42);

  // Random tokens and targets; a few targets are -1 (ignored by the loss).
  Rng rng(7);
  std::vector<int> tokens(BT), targets(BT);
  for (int i = 0; i < BT; ++i) {
    tokens[i] = static_cast<int>(rng.below(V));
    targets[i] = i % 7 == 3 ? -1 : static_cast<int>(rng.below(V));
  }

  const testing::TempDir dir("torch_parity_" + c.name);
  std::vector<char32_t> chars;
  for (int i = 0; i < V; ++i) chars.push_back(U'a' + i);
  const CharTokenizer tokenizer(chars);
  save_weights(dir / "weights.safetensors", model.parameters(), gpt_header(config, tokenizer));
  write_safetensors(dir / "batch.safetensors", {{"tokens", Dtype::I32, {B, T}, tokens.data()},
                                                {"targets", Dtype::I32, {B, T}, targets.data()}});
  const nlohmann::json j = {{"model", to_json(config)},
                            {"training",
                             {{"lr", c.lr},
                              {"beta1", c.beta1},
                              {"beta2", c.beta2},
                              {"weight_decay", c.weight_decay},
                              {"grad_clip", c.grad_clip},
                              {"steps", c.steps}}}};
  write_file_atomic(dir / "config.json", j.dump(2));
  const int rc = testing::run_python("tests/torch/gpt_reference.py", {dir.path().string()});
  ASSERT_EQ(rc, 0) << "tests/torch/gpt_reference.py failed (exit " << rc
                   << "); torch is required: run scripts/setup.sh --all";
  const SafetensorsFile ref(dir / "reference.safetensors");

  std::printf("[%s]\n", c.name.c_str());
  // One forward + backward, as a training step does.
  const Batch batch{{B, T}, tokens.data(), targets.data()};
  ParameterSet& params = model.parameters();
  params.zero_grad();
  const float loss = model.forward(batch, {/*training=*/true, /*dropout_seed=*/1});
  model.backward(1.0f);
  DiffReport forward("logits, loss", kForwardNmse);
  if (!c.chunk_rows) forward.add("logits", {model.logits(), size_t(BT) * V}, ref.f32("logits"));
  forward.add("loss", {&loss, 1}, ref.f32("loss"));
  forward.check();
  DiffReport grads("gradients", kGradNmse);
  for (const TensorSpec& spec : params.layout().specs()) {
    EXPECT_EQ(ref.info("grad." + spec.name).shape, spec.shape) << spec.name;
    grads.add("grad." + spec.name, {params.grads().at(spec), spec.numel}, ref.f32("grad." + spec.name));
  }
  grads.check();
  // The key bias gets no gradient (see below), in potop as in torch.
  for (int l = 0; config.bias && l < config.n_layer; ++l) {
    const std::string name = "h." + std::to_string(l) + ".attn.c_attn.bias";
    const float* g = params.grads().at(*params.layout().find(name));
    auto r = ref.f32("grad." + name);
    double scale = 0, key = 0;
    for (int i = 0; i < 3 * config.n_embd; ++i) {
      const bool is_key = i >= config.n_embd && i < 2 * config.n_embd;
      (is_key ? key : scale) = std::max(is_key ? key : scale, double(std::max(std::fabs(g[i]), std::fabs(r[i]))));
    }
    EXPECT_LT(key, 1e-5 * scale) << name << ": the key bias should get no gradient";
  }

  // `steps` AdamW steps on the same batch, as the trainer runs them.
  const std::vector<float> initial(params.values().data(), params.values().data() + params.values().floats());
  AdamWHyper hyper;
  hyper.lr = static_cast<float>(c.lr);
  hyper.beta1 = static_cast<float>(c.beta1);
  hyper.beta2 = static_cast<float>(c.beta2);
  hyper.eps = 1e-8f;
  hyper.weight_decay = static_cast<float>(c.weight_decay);
  AdamW optimizer(params.layout(), hyper);
  BatchParallel one(model, 1);
  std::vector<float> losses, norms;
  for (int step = 0; step < c.steps; ++step) {
    const StepSettings s{static_cast<float>(c.lr), static_cast<float>(c.grad_clip), 1, /*dropout_seed=*/1, step};
    const StepResult r = train_step(one, optimizer, s, [&] { return batch; });
    losses.push_back(r.loss);
    norms.push_back(static_cast<float>(r.grad_norm));
  }
  DiffReport training("step losses, grad norms", kForwardNmse);
  training.add("losses", losses, ref.f32("losses"));
  training.add("grad_norms", norms, ref.f32("grad_norms"));
  training.check();
  // Compare what the steps changed (final - initial), which is far smaller than the parameters.
  // The key bias (attn.c_attn.bias [C, 2C)) is left out: it adds q·b_k to every score of a query,
  // which softmax ignores, so its gradient is 0 up to rounding (checked above) and AdamW's m/√v
  // turns that rounding noise into updates that differ between any two implementations.
  DiffReport updates("updates (final - initial)", kUpdateNmse);
  const size_t C = config.n_embd;
  for (const TensorSpec& spec : params.layout().specs()) {
    const float* p = params.values().at(spec);
    auto r = ref.f32("final." + spec.name);
    const bool qkv_bias = spec.name.ends_with("attn.c_attn.bias");
    std::vector<float> mine, theirs;
    for (size_t i = 0; i < spec.numel; ++i) {
      if (qkv_bias && i >= C && i < 2 * C) continue;
      mine.push_back(p[i] - initial[spec.offset + i]);
      theirs.push_back(r[i] - initial[spec.offset + i]);
    }
    updates.add("final." + spec.name, mine, theirs);
  }
  updates.check();
  // The losses must actually fall, or the steps tested nothing.
  EXPECT_LT(losses.back(), losses.front() - 0.05f);
  std::printf("  losses %.6f -> %.6f, grad norms %.4f .. %.4f (clip %.3g)\n", losses.front(), losses.back(),
              norms.front(), norms.back(), c.grad_clip);
}

TEST(TorchParity, PreLnGeluLearnedPositions) {
  Case c{"pre_gelu_learned", small_config()};
  c.grad_clip = 1.0;
  run_case(c);
}

TEST(TorchParity, PostLnReluSinusoidalShortContext) {
  Case c{"post_relu_sinusoidal", small_config()};
  c.config.norm = NormPlacement::kPost;
  c.config.activation = Activation::kRelu;
  c.config.positions = PositionEncoding::kSinusoidal;
  c.config.n_head = 2;
  c.config.n_embd = 24;
  c.T = 12;  // < block_size
  c.grad_clip = 0.1;
  run_case(c);
}

TEST(TorchParity, NoBiasNoClip) {
  Case c{"nobias", small_config()};
  c.config.bias = false;
  c.config.n_layer = 3;
  c.config.n_head = 3;
  c.config.n_embd = 24;
  c.B = 2;
  c.grad_clip = 0.0;
  c.beta1 = 0.8;
  c.beta2 = 0.99;
  run_case(c);
}

TEST(TorchParity, BertsSwitchesPostLnErfEpsSegmentsEmbeddingNorm) {
  // The body BERT is built from: post-LN, the exact GELU, another LayerNorm eps (large enough to
  // matter: 1e-2), a segment table and a LayerNorm on the embeddings.
  Case c{"bert_switches", small_config()};
  c.config.norm = NormPlacement::kPost;
  c.config.activation = Activation::kGeluErf;
  c.config.norm_eps = 1e-2f;
  c.config.token_types = 2;
  c.config.embedding_norm = true;
  run_case(c);
}

TEST(TorchParity, LmHeadInChunks) {
  // The LM head of a large vocabulary takes a loss-only pass a few rows at a time (nn/lm_head.h):
  // forced here with chunks of 5 rows of the 48 (the last one short). No logits are kept to
  // compare; the loss, every gradient and the steps are.
  Case c{"lm_head_chunks", small_config()};
  c.chunk_rows = 5;
  run_case(c);
}

}  // namespace
}  // namespace potop
