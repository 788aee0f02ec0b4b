// Token + position embedding, and the fixed sinusoidal position table of
// "Attention Is All You Need".
#pragma once

namespace potop {

// out (B, T, C) = scale · wte[tokens[b, t]] + wpe[pos0 + t]
// tokens (B, T) in [0, V); wte (V, C); wpe (>= pos0 + T, C), may be null (no positions added).
// scale is 1 for GPT-2; the paper multiplies a table shared with the output projection by √C.
void embedding_forward(float* out, const int* tokens, const float* wte, const float* wpe, int B, int T, int C,
                       int pos0 = 0, float scale = 1.0f);

// Parameter gradients only, so they always accumulate (grad_store.h). dwte (V, C) += scale · scatter of dout by
// token; dwpe (T, C) += Σ_b dout. dwpe may be null (sinusoidal positions are not trained). Deterministic for any
// thread count.
void embedding_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T, int C,
                        float scale = 1.0f);

// table (T, C): PE(pos, 2i) = sin(pos / 10000^(2i/C)), PE(pos, 2i+1) = cos(pos / 10000^(2i/C)).
void sinusoidal_positions(float* table, int T, int C);

}  // namespace potop
