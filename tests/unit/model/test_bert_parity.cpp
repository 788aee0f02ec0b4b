// potop's BERT against the PyTorch reference (scripts/torch_bert.py via tests/torch/bert_reference.py)
// on identical weights and masked batches: the encoder's output, every layer's attention
// probabilities, the logits of the masked positions, the loss, every parameter gradient, and
// five AdamW steps (each step's loss and grad norm, and what the steps changed), pre-LN and
// post-LN. The batches are what the trainer builds (MaskedRows: [CLS] window [SEP], 80/10/10
// masking) with rows of different lengths, so the key padding mask, the gather of the masked
// rows and the head's bias are all on the path. Errors are NMSE with the bounds of the GPT's
// parity test (test_torch_parity.cpp); a one-sided attention, a mask that lets padding through
// or a missing bias are orders of magnitude above them.
//
// torch is a required test dependency (support/torch_oracle.h): without it the reference fails
// and so does the test, naming scripts/setup.sh --all.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/weights.h"
#include "core/file_io.h"
#include "core/rng.h"
#include "core/safetensors.h"
#include "models/bert/bert.h"
#include "models/bert/bert_kind.h"
#include "models/bert/bert_trainer.h"
#include "models/bert/masked_batches.h"
#include "support/testing.h"
#include "support/torch_oracle.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "train/adamw.h"
#include "train/batch_parallel.h"
#include "train/train_step.h"

namespace potop {
namespace {

using testing::DiffReport;

constexpr double kForwardNmse = 1e-11;
constexpr double kGradNmse = 1e-10;
constexpr double kUpdateNmse = 1e-7;

struct Case {
  std::string name;
  BertConfig config;
  int B = 4, T = 14;
  std::vector<int> window_lengths = {};  // per row, at most T - 2
  double lr = 1e-2, beta1 = 0.9, beta2 = 0.95, weight_decay = 0.1, grad_clip = 1.0;
  int steps = 5;
};

BertConfig small_config() {
  BertConfig c;
  c.vocab_size = 24;  // 4 specials, 19 ordinary tokens, [MASK]
  c.block_size = 16;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 32;
  c.dropout = 0.0f;
  return c;
}

// The model's init, spread (support/torch_oracle.h) so that a wrong kernel cannot pass by accident.
void init_model(Bert& model, uint64_t seed) {
  model.init_weights(seed);
  testing::spread_init(model.parameters(), seed);
}

// One masked batch, owning its arrays (MaskedRows reuses its own).
struct OwnedBatch {
  std::vector<int> tokens, targets, lengths;
  int B = 0, T = 0;
  Batch batch() const {
    Batch b{{B, T}, tokens.data(), targets.data()};
    b.lengths = lengths.data();
    return b;
  }
};

OwnedBatch masked_batch(const std::vector<int>& windows, const std::vector<int>& window_lengths, int B, int T,
                        const MaskingRule& rule, uint64_t seed) {
  MaskedRows rows;
  Rng rng(seed);
  const Batch b = rows.fill(windows.data(), window_lengths.data(), B, T, rule, rng);
  return {rows.tokens, rows.targets, rows.lengths, b.B, b.T};
}

void run_case(const Case& c) {
  const BertConfig& config = c.config;
  const int B = c.B, T = c.T, V = config.vocab_size, C = config.n_embd, W = T - 2;
  ASSERT_EQ(static_cast<int>(c.window_lengths.size()), B);
  Bert model(config);
  init_model(model, 42);

  // Windows of ordinary tokens; 30% masked, so that every row, the shortest too, has targets.
  const MaskingRule rule{0.3, config.vocab_size - 1 /* [MASK] */, kSpecialCount, V - 1};
  Rng rng(7);
  std::vector<int> windows(size_t(B) * W);
  for (int& t : windows) t = kSpecialCount + static_cast<int>(rng.below(uint64_t(V - 1 - kSpecialCount)));
  const OwnedBatch one = masked_batch(windows, c.window_lengths, B, T, rule, 11);
  std::vector<OwnedBatch> steps;
  for (int s = 0; s < c.steps; ++s) steps.push_back(masked_batch(windows, c.window_lengths, B, T, rule, 100 + s));
  // The case must test what it claims: padded rows, and [MASK], random and kept positions.
  int padded = 0, masks = 0, kept = 0;
  for (int b = 0; b < B; ++b) padded += one.lengths[b] < T;
  for (int i = 0; i < B * T; ++i)
    if (one.targets[i] >= 0) (one.tokens[i] == config.vocab_size - 1 /* [MASK] */ ? masks : kept) += 1;
  EXPECT_GT(padded, 0);
  EXPECT_GT(masks, 0);
  EXPECT_GT(kept, 0) << "no random or kept position in the batch";

  const testing::TempDir dir("bert_parity_" + c.name);
  std::vector<char32_t> chars;
  for (int i = 0; i < V - 1; ++i) chars.push_back(U'a' + i);
  const CharTokenizer tokenizer(chars);
  save_weights(dir / "weights.safetensors", model.parameters(), ModelHeader{kBertKind, to_json(config), &tokenizer});
  std::vector<int> step_tokens, step_targets;
  for (const OwnedBatch& s : steps) {
    step_tokens.insert(step_tokens.end(), s.tokens.begin(), s.tokens.end());
    step_targets.insert(step_targets.end(), s.targets.begin(), s.targets.end());
  }
  write_safetensors(dir / "batch.safetensors",
                    {{"tokens", Dtype::I32, {B, T}, one.tokens.data()},
                     {"targets", Dtype::I32, {B, T}, one.targets.data()},
                     {"lengths", Dtype::I32, {B}, one.lengths.data()},
                     {"step_tokens", Dtype::I32, {c.steps, B, T}, step_tokens.data()},
                     {"step_targets", Dtype::I32, {c.steps, B, T}, step_targets.data()}});
  const nlohmann::json j = {{"model", to_json(config)},
                            {"training",
                             {{"lr", c.lr},
                              {"beta1", c.beta1},
                              {"beta2", c.beta2},
                              {"weight_decay", c.weight_decay},
                              {"grad_clip", c.grad_clip},
                              {"steps", c.steps}}}};
  write_file_atomic(dir / "config.json", j.dump(2));
  const int rc = testing::run_python("tests/torch/bert_reference.py", {dir.path().string()});
  ASSERT_EQ(rc, 0) << "tests/torch/bert_reference.py failed (exit " << rc
                   << "); torch is required: run scripts/setup.sh --all";
  const SafetensorsFile ref(dir / "reference.safetensors");

  std::printf("[%s] %d masked positions of %d real ones\n", c.name.c_str(), masks + kept,
              [&] { int n = 0; for (int l : one.lengths) n += l; return n; }());
  // One forward + backward, as a training step does.
  const Batch batch = one.batch();
  ParameterSet& params = model.parameters();
  params.zero_grad();
  const float loss = model.forward(batch, {/*training=*/true, /*dropout_seed=*/1});
  model.backward(1.0f);
  const size_t M = model.masked_rows().size();
  EXPECT_EQ(static_cast<int>(M), masks + kept);
  DiffReport forward("hidden, attention, logits, loss", kForwardNmse);
  forward.add("hidden", {model.hidden(), size_t(B) * T * C}, ref.f32("hidden"));
  forward.add("logits", {model.logits(), M * V}, ref.f32("logits"));
  forward.add("loss", {&loss, 1}, ref.f32("loss"));
  for (int l = 0; l < config.n_layer; ++l) {
    const std::string name = "attn." + std::to_string(l);
    forward.add(name, {model.attention(l), size_t(B) * config.n_head * T * T}, ref.f32(name));
  }
  forward.check();
  DiffReport grads("gradients", kGradNmse);
  for (const TensorSpec& spec : params.layout().specs()) {
    EXPECT_EQ(ref.info("grad." + spec.name).shape, spec.shape) << spec.name;
    grads.add("grad." + spec.name, {params.grads().at(spec), spec.numel}, ref.f32("grad." + spec.name));
  }
  grads.check();
  // Padding is exact: no gradient reaches the position embedding of a position no row reaches.
  const int longest = *std::max_element(one.lengths.begin(), one.lengths.end());
  if (const TensorSpec* wpe = params.layout().find("wpe.weight"); wpe && longest < T) {
    const float* g = params.grads().at(*wpe);
    for (size_t i = size_t(longest) * C; i < size_t(T) * C; ++i) ASSERT_EQ(g[i], 0.0f) << "wpe element " << i;
  }

  // Two replicas on the batch's rows (each shard's loss weighted by its masked positions) give
  // the one model's loss and gradients.
  const std::vector<float> whole(params.grads().data(), params.grads().data() + params.grads().floats());
  {
    BatchParallel two(model, 2);
    two.reserve({B, T});
    params.zero_grad();
    const float loss2 = two.forward(batch, {true, 1});
    two.backward(1.0f);
    two.reduce_grads();
    EXPECT_NEAR(loss2, loss, 1e-5 * std::fabs(loss));
    DiffReport sharded("two replicas vs one model", kGradNmse);
    sharded.add("grads", {params.grads().data(), params.grads().floats()}, whole);
    sharded.check();
  }

  // `steps` AdamW steps, each on its own masks, as the trainer runs them.
  const std::vector<float> initial(params.values().data(), params.values().data() + params.values().floats());
  AdamWHyper hyper;
  hyper.lr = static_cast<float>(c.lr);
  hyper.beta1 = static_cast<float>(c.beta1);
  hyper.beta2 = static_cast<float>(c.beta2);
  hyper.eps = 1e-8f;
  hyper.weight_decay = static_cast<float>(c.weight_decay);
  AdamW optimizer(params.layout(), hyper);
  BatchParallel single(model, 1);
  std::vector<float> losses, norms;
  for (int step = 0; step < c.steps; ++step) {
    const StepSettings s{static_cast<float>(c.lr), static_cast<float>(c.grad_clip), 1, /*dropout_seed=*/1, step};
    const StepResult r = train_step(single, optimizer, s, [&] { return steps[size_t(step)].batch(); });
    losses.push_back(r.loss);
    norms.push_back(static_cast<float>(r.grad_norm));
  }
  DiffReport training("step losses, grad norms", kForwardNmse);
  training.add("losses", losses, ref.f32("losses"));
  training.add("grad_norms", norms, ref.f32("grad_norms"));
  training.check();
  // What the steps changed; the key bias left out as in the GPT's test (softmax ignores it, so
  // its gradient is rounding noise that AdamW scales to full steps, differently on each side).
  DiffReport updates("updates (final - initial)", kUpdateNmse);
  for (const TensorSpec& spec : params.layout().specs()) {
    const float* p = params.values().at(spec);
    auto r = ref.f32("final." + spec.name);
    const bool qkv_bias = spec.name.ends_with("attn.c_attn.bias");
    std::vector<float> mine, theirs;
    for (size_t i = 0; i < spec.numel; ++i) {
      if (qkv_bias && i >= size_t(C) && i < 2 * size_t(C)) continue;
      mine.push_back(p[i] - initial[spec.offset + i]);
      theirs.push_back(r[i] - initial[spec.offset + i]);
    }
    updates.add("final." + spec.name, mine, theirs);
  }
  updates.check();
  std::printf("  losses %.6f .. %.6f, grad norms %.4f .. %.4f (clip %.3g)\n", losses.front(), losses.back(),
              norms.front(), norms.back(), c.grad_clip);
}

TEST(BertParity, PreLnGeluLearnedPadded) {
  Case c{"pre_gelu_learned", small_config()};
  c.window_lengths = {10, 7, 3, 9};  // no row reaches the last two positions
  run_case(c);
}

TEST(BertParity, PostLnGeluSinusoidalPaddedShortContext) {
  Case c{"post_gelu_sinusoidal", small_config()};
  c.config.norm = NormPlacement::kPost;
  c.config.positions = PositionEncoding::kSinusoidal;
  c.config.n_head = 2;
  c.config.n_embd = 24;
  c.B = 3;
  c.T = 11;  // < block_size
  c.window_lengths = {1, 9, 5};
  c.grad_clip = 0.1;
  run_case(c);
}

TEST(BertParity, PreLnReluNoBiasNoClip) {
  Case c{"pre_relu_nobias", small_config()};
  c.config.activation = Activation::kRelu;
  c.config.bias = false;  // the LayerNorms and linear layers lose theirs; lm_head.bias stays
  c.config.n_layer = 3;
  c.config.n_head = 3;
  c.config.n_embd = 24;
  c.B = 3;
  c.window_lengths = {12, 12, 4};
  c.grad_clip = 0.0;
  c.beta1 = 0.8;
  c.beta2 = 0.99;
  run_case(c);
}

// Hugging Face's BERT: post-LN, exact GELU, eps 1e-12, the segment table and the embedding
// LayerNorm, and the masked-LM head's dense + GELU + LayerNorm transform (what potop import makes of
// a BertForMaskedLM).
TEST(BertParity, HuggingFaceShapePostLnErfTransform) {
  Case c{"hf_shape", small_config()};
  c.config.norm = NormPlacement::kPost;
  c.config.activation = Activation::kGeluErf;
  c.config.norm_eps = 1e-12f;
  c.config.token_types = 2;
  c.config.embedding_norm = true;
  c.config.mlm_transform = true;
  c.window_lengths = {12, 5, 8, 12};
  run_case(c);
}

}  // namespace
}  // namespace potop
