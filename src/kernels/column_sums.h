// Sums over the rows of a batch (bias and LayerNorm gain gradients) that come out the same for
// every thread count: rows are summed in fixed chunks of kRowChunk, each in row order, and the
// chunk sums are then added in chunk order. A kernel that walks its rows anyway (to write the
// input gradient) accumulates its chunk sums on the way and needs no second pass over the batch.
#pragma once
#include <cstddef>

namespace potop {

constexpr int kRowChunk = 32;

inline int row_chunks(int N) { return (N + kRowChunk - 1) / kRowChunk; }

// Per-thread scratch of at least n floats for chunk sums; grows once, then is reused.
float* chunk_sum_scratch(int slot, size_t n);

// dst (width) += the column sums of partial (chunks, width), each column summed in row order, so
// the result is the same for every thread count. Also the plain column sum of any row-major
// matrix (a bias gradient: dbias += Σ_n dout[n]).
void add_chunk_sums(float* dst, const float* partial, int chunks, int width);

}  // namespace potop
