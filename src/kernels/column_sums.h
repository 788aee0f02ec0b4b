// Sums over the rows of a batch (bias and LayerNorm gain gradients) that come out the same for
// every thread count: rows are summed in fixed chunks of kRowChunk, each in row order, and the
// chunk sums are then added in chunk order. A kernel that walks its rows anyway (to write the
// input gradient) accumulates its chunk sums on the way and needs no second pass over the batch.
#pragma once
#include <algorithm>
#include <cstddef>
#include <span>

#include "core/error.h"
#include "core/scratch.h"

namespace potop {

constexpr int kRowChunk = 32;

inline int row_chunks(int N) { return (N + kRowChunk - 1) / kRowChunk; }

// dst (width) += the column sums of partial (chunks, width), each column summed in row order, so
// the result is the same for every thread count. Also the plain column sum of any row-major
// matrix (a bias gradient: dbias += Σ_n dout[n]).
void add_chunk_sums(float* dst, const float* partial, int chunks, int width);

// The walk for a kernel that sums over rows on its way through them. Rows [0, N) go in chunks of
// kRowChunk, spread over threads when `parallel`: chunk(r0, r1, sums) handles rows [r0, r1) and
// adds their terms into sums[i], width floats zeroed for this chunk, one per entry of dst. Then
// dst[i] (width) += the chunks' sums[i] in chunk order. A null dst[i] still gets its sums (so
// the chunk's loop needs no test) but they go nowhere.
template <class Chunk>
void chunked_row_sums(int N, int width, std::span<float* const> dst, bool parallel, Chunk chunk) {
  struct Tag;
  constexpr size_t kMaxSums = 2;
  POTOP_CHECK(dst.size() <= kMaxSums, "chunked_row_sums: at most two sums");
  const int chunks = row_chunks(N);
  const size_t plane = static_cast<size_t>(chunks) * width;  // one sum's partials (chunks, width)
  float* partial = thread_scratch<Tag>(0, dst.size() * plane);
#pragma omp parallel for schedule(static) if (parallel)
  for (int ch = 0; ch < chunks; ++ch) {
    float* sums[kMaxSums] = {};
    for (size_t i = 0; i < dst.size(); ++i) {
      sums[i] = partial + i * plane + static_cast<size_t>(ch) * width;
      std::fill_n(sums[i], width, 0.0f);
    }
    chunk(ch * kRowChunk, std::min(N, (ch + 1) * kRowChunk), sums);
  }
  for (size_t i = 0; i < dst.size(); ++i) {
    if (dst[i]) add_chunk_sums(dst[i], partial + i * plane, chunks, width);
  }
}

}  // namespace potop
