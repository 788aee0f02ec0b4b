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

// dst (width) += Σ_ch partial[ch * width + c] over ch in [0, chunks), in order.
void add_chunk_sums(float* dst, const float* partial, int chunks, int width);

}  // namespace potop
