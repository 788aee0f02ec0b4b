// Rotary position embedding (RoFormer, Su et al. 2021) in GPT-NeoX's and Hugging Face Llama's
// layout: within a head of D values, the pair (i, i + D/2), i < D/2, is rotated by the angle
// pos · θ^(-2i/D), so that the dot product of a query and a key depends only on how far apart
// they are. llama.cpp rotates adjacent pairs (2i, 2i + 1) instead; its GGUF export permutes the
// rows of W_q and W_k to match (llama_gguf.h).
//
//   x'_i = x_i cos − x_{i+D/2} sin,   x'_{i+D/2} = x_{i+D/2} cos + x_i sin
//
// The rotation is orthogonal, so its backward pass is the same rotation by −angle.
#pragma once
#include <vector>

namespace potop {

// The inverse frequencies θ^(-2i/D), i < D/2, computed as Hugging Face computes them (in float).
std::vector<float> rope_frequencies(int D, float theta);

// Rotates, in place, `heads` heads of D values at the start of each of `rows` rows (rows `stride`
// floats apart, heads side by side); row r is at position positions[r]. D is even.
void rope_forward(float* x, int rows, int stride, int heads, int D, const int* positions, const float* frequencies);
// The gradient through rope_forward, in place: dx (the rotated values' gradient) rotated back.
void rope_backward(float* dx, int rows, int stride, int heads, int D, const int* positions, const float* frequencies);

}  // namespace potop
