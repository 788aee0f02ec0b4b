// SwiGLU (Shazeer, 2020), Llama's feed-forward non-linearity: a SiLU gate times a linear unit,
//   out = silu(gate) ⊙ up,  silu(g) = g σ(g),
// where gate and up are the two halves of one fused projection's output row [gate | up].
#pragma once

#include "kernels/grad_store.h"

namespace potop {

// out (N, F) = silu(gate) ⊙ up, gate_up (N, 2F) holding [gate | up] in each row.
void swiglu_forward(float* out, const float* gate_up, int N, int F);

// dgate_up (N, 2F) += [dout ⊙ up ⊙ silu'(gate) | dout ⊙ silu(gate)]   (= with GradStore::kOverwrite),
//   silu'(g) = σ(g) (1 + g (1 - σ(g))).
void swiglu_backward(float* dgate_up, const float* dout, const float* gate_up, int N, int F,
                     GradStore store = GradStore::kAccumulate);

}  // namespace potop
