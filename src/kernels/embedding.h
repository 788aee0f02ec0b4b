// Token + position embedding, and the fixed sinusoidal position table of
// "Attention Is All You Need".
#pragma once

namespace potop {

// out (B, T, C) = wte[tokens[b, t]] + wpe[pos0 + t]
// tokens (B, T) in [0, V); wte (V, C); wpe (>= pos0 + T, C), may be null (no positions added).
void embedding_forward(float* out, const int* tokens, const float* wte, const float* wpe, int B, int T, int C,
                       int pos0 = 0);

// Parameter gradients only, so they always accumulate (grad_store.h). dwte (V, C) += scatter of dout by token; dwpe (T, C) += Σ_b dout.
// dwpe may be null (sinusoidal positions are not trained). Deterministic for any thread count.
void embedding_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T, int C);

// table (T, C): PE(pos, 2i) = sin(pos / 10000^(2i/C)), PE(pos, 2i+1) = cos(pos / 10000^(2i/C)).
void sinusoidal_positions(float* table, int T, int C);

}  // namespace potop
