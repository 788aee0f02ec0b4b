// Many rows of x against q8_0 / q4_0 weights (quant.h's quant_matmul from a few rows on; serving
// and beam search decode a batch of rows at once): sixteen rows of x sit in the sixteen int32
// lanes of AVX-512 VNNI's vpdpbusd, so every lane sums one row's block exactly in integers with no
// horizontal sum, and each weight block is read once for the sixteen.
//
// One weight row n and one block b, for the sixteen rows of x at once:
//   - x's blocks are transposed once per product: step j (0..7) of block b is a register whose
//     lane m holds bytes 4j..4j+3 of x row m's block b;
//   - the weights' four bytes of step j are broadcast to every lane, and
//     vpdpbusd(S, w + o, x_j) adds Σ (w_k + o) x_k per lane, with the weights made unsigned
//     (vpdpbusd multiplies unsigned by signed bytes): q8_0's by + 128, q4_0's nibbles as they are
//     (its −8 then comes off with them);
//   - S − o·Σx is the block's exact integer sum, Σx being quantize_activations' block sums.
// The float step is quant.h's, lane by lane: block b goes to partial sum b mod 8 as
// fma(d_w · d_x, S, partial), and the eight are added in quant.h's order. So every result is
// quant_gemv's of that row, bit for bit.
#pragma once
#include <cstdint>

#include "kernels/quant.h"

namespace potop {

// Whether this CPU runs the kernel (AVX-512 F/BW/VL with VNNI).
bool quant_batch_available();

// Y (M, N) = X · Wᵀ (+= when accumulate) for W of `type` (q8_0 or q4_0) as N rows of K, with X's
// rows already quantized by quantize_activations: q (M × K), d and s (M × K/32). With `parallel`,
// OpenMP threads split W's rows (the results do not depend on how). Only where
// quant_batch_available().
void quant_matmul_batch(QuantType type, const void* W, int N, int K, const int8_t* q, const float* d, const int32_t* s,
                        int M, float* Y, bool accumulate, bool parallel);

}  // namespace potop
