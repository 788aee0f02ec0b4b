#include "nn/lm_head.h"

#include <algorithm>

#include "core/profile.h"
#include "kernels/linear.h"
#include "kernels/quant.h"
#include "kernels/softmax.h"

namespace potop {

namespace {
LMHeadChunks g_chunks;
}  // namespace

const LMHeadChunks& lm_head_chunks() { return g_chunks; }
void set_lm_head_chunks(const LMHeadChunks& chunks) { g_chunks = chunks; }

int64_t TiedLMHead::kept_rows(int64_t rows, int vocab_size, bool loss_only) {
  if (!loss_only || rows * vocab_size <= g_chunks.whole_floats) return rows;
  return std::min(rows, std::max<int64_t>(1, g_chunks.chunk_floats / vocab_size));
}

TiedLMHead::TiedLMHead(LayerBuilder& b, ParamId token_table, int vocab_size, int n_embd, ParamId bias,
                       float label_smoothing)
    : wte_(token_table), bias_(bias), V_(vocab_size), C_(n_embd), label_smoothing_(label_smoothing) {
  b.output_table(token_table);
  // Output buffers: allocated for the rows a pass keeps (Activations::reserve_output).
  logits_ = b.acts.keep("logits", vocab_size, Rows::kOutput);
  probs_ = b.acts.keep("probabilities", vocab_size, Rows::kOutput);
  losses_ = b.acts.keep("losses", 1);
  dlosses_ = b.acts.scratch("d losses", 1);
}

int TiedLMHead::chunk_rows(const LayerPass& pass, const int* targets) const {
  return static_cast<int>(kept_rows(pass.rows(), V_, pass.loss_only && targets != nullptr));
}

void TiedLMHead::project(float* logits, const float* x, int n, const Frame& f) const {
  const QuantizedMatrix* q = f.params.quantized_copy(wte_);
  if (!q) return linear_forward(logits, x, f.value(wte_), f.value(bias_), n, C_, V_, WeightLayout::kOutIn);
  const float* bias = f.value(bias_);
  if (bias)
    for (int r = 0; r < n; ++r) std::copy(bias, bias + V_, logits + static_cast<size_t>(r) * V_);
  quant_matmul(q->type, q->layout, q->data.data(), V_, C_, x, n, logits, /*accumulate=*/bias != nullptr);
}

float TiedLMHead::forward(const float* x, const int* targets, const LayerPass& pass, const Frame& f,
                          int& counted) const {
  counted = 0;
  if (pass.last_row_logits) {  // generation reading a prompt: the next token's logits only
    POTOP_CHECK(!targets, "last_row_logits is a pass without targets");
    f.acts.reserve_output(1);
    POTOP_PROFILED("lm head", project(f.buffer(logits_), x + size_t(pass.rows() - 1) * C_, 1, f));
    return 0.0f;
  }
  const int N = pass.rows(), R = chunk_rows(pass, targets);
  f.acts.reserve_output(R);
  float* logits = f.buffer(logits_);
  if (R == N) {
    POTOP_PROFILED("lm head", project(logits, x, N, f));  // logits = x·wteᵀ (+ bias)
    if (!targets) return 0.0f;
    POTOP_PROFILED("cross-entropy", crossentropy_forward(f.buffer(losses_), f.buffer(probs_), logits, targets, N, V_,
                                                         label_smoothing_));
  } else {
    // Chunk by chunk, the probabilities overwriting the chunk's logits: only the losses stay.
    for (int r0 = 0; r0 < N; r0 += R) {
      const int n = std::min(R, N - r0);
      POTOP_PROFILED("lm head", project(logits, x + size_t(r0) * C_, n, f));
      POTOP_PROFILED("cross-entropy", crossentropy_forward(f.buffer(losses_) + r0, logits, logits, targets + r0, n,
                                                           V_, label_smoothing_));
    }
  }
  const float* losses = f.buffer(losses_);
  double sum = 0;
  for (int i = 0; i < N; ++i) {
    if (targets[i] >= 0) sum += losses[i], ++counted;
  }
  return counted ? static_cast<float>(sum / counted) : 0.0f;
}

void TiedLMHead::backward(float* dx, float loss_scale, int counted, const float* x, const int* targets,
                          const LayerPass& pass, const Frame& f) const {
  const int N = pass.rows(), R = chunk_rows(pass, targets);
  // loss = Σ losses / counted
  float* dlosses = f.buffer(dlosses_);
  const float dloss = counted ? loss_scale / static_cast<float>(counted) : 0.0f;
  for (int i = 0; i < N; ++i) dlosses[i] = targets[i] >= 0 ? dloss : 0.0f;
  if (R == N) {
    float* probs = f.buffer(probs_);
    float* dlogits = probs;  // the largest activation exists once
    POTOP_PROFILED("cross-entropy", crossentropy_backward(dlogits, probs, targets, dlosses, N, V_,
                                                          GradStore::kOverwrite, label_smoothing_));
    // logits = x·wteᵀ
    POTOP_PROFILED("lm head", linear_backward(dx, f.grad(wte_), f.grad(bias_), dlogits, x, f.value(wte_), N, C_, V_,
                                              WeightLayout::kOutIn, GradStore::kOverwrite));
    return;
  }
  // The forward kept no logits: each chunk's are computed again, made probabilities (the same
  // losses come out again, into the same places), then gradients, in one (R, V) buffer.
  float* chunk = f.buffer(logits_);
  for (int r0 = 0; r0 < N; r0 += R) {
    const int n = std::min(R, N - r0);
    const float* xc = x + size_t(r0) * C_;
    POTOP_PROFILED("lm head",
                   linear_forward(chunk, xc, f.value(wte_), f.value(bias_), n, C_, V_, WeightLayout::kOutIn));
    POTOP_PROFILED("cross-entropy", crossentropy_forward(f.buffer(losses_) + r0, chunk, chunk, targets + r0, n, V_,
                                                         label_smoothing_));
    POTOP_PROFILED("cross-entropy", crossentropy_backward(chunk, chunk, targets + r0, dlosses + r0, n, V_,
                                                          GradStore::kOverwrite, label_smoothing_));
    POTOP_PROFILED("lm head", linear_backward(dx + size_t(r0) * C_, f.grad(wte_), f.grad(bias_), chunk, xc,
                                              f.value(wte_), n, C_, V_, WeightLayout::kOutIn, GradStore::kOverwrite));
  }
}

}  // namespace potop
