// q8_0 and q4_0 matrices with their rows interleaved for AVX-512 VNNI: stripes of sixteen rows of
// W, so that one 512-bit register holds four weights of each of sixteen rows and vpdpbusd sums
// sixteen rows' blocks at once, one row per int32 lane, with no horizontal sum (llama.cpp
// "repacks" its q4_0 weights for the same reason). Rearranged once, when a model is loaded; the
// bytes are the same blocks in another order, so a stripe is exactly as large as its sixteen rows.
//
// Stripe p holds rows 16p .. 16p + 15 (the last stripe padded with zero rows), nb = K / 32 blocks:
//   scales  nb × 16 f16: block b's scale of row r at [b][r]
//   quants  nb × S registers of 64 bytes (S = 8 for q8_0, 4 for q4_0): register s of block b
//           holds, in lane r (bytes 4r .. 4r + 3), bytes 4s .. 4s + 3 of row r's block quants:
//           q8_0 weights + 128 (unsigned, as vpdpbusd multiplies them), q4_0's bytes as they are
//           (weight j in the low nibble, weight j + 16 in the high one)
//
// One block b of a stripe against one row of quantized activations x (quantize_activations):
//   q8_0  S = Σ_s vpdpbusd(w_s, x[4s .. 4s+3] broadcast) − 128·Σx
//   q4_0  S = Σ_s vpdpbusd(w_s & 0x0F, x[4s ..]) + (Σ_s vpdpbusd(w_s & 0xF0, x[16 + 4s ..]) >> 4) − 8·Σx
//         (the high nibbles are taken in place, sixteen times their value: the sum is then
//         exactly sixteen times theirs)
// and the float step is quant.h's, lane by lane: block b goes to partial sum b mod 8 as
// fma(d_w · d_x, S, partial), the eight added in quant.h's order. So every result is quant_gemv's
// of that row on the rows layout, bit for bit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/quant.h"

namespace potop {

inline constexpr int kStripeRows = 16;  // rows of W per stripe

// Bytes of N rows in stripes: whole stripes of sixteen rows.
size_t quant_interleaved_bytes(QuantType type, int N, int K);

// rows (N rows of K, quant_row_bytes apart) to stripes, and back. q8_0 and q4_0 only.
std::vector<uint8_t> quant_rows_to_interleaved(QuantType type, const uint8_t* rows, int N, int K);
std::vector<uint8_t> quant_interleaved_to_rows(QuantType type, const uint8_t* stripes, int N, int K);

// Whether this CPU runs quant_matmul_interleaved (AVX-512 F/BW/VL with VNNI).
bool quant_interleaved_available();

// Y (M, N) = X · Wᵀ (+= when accumulate) for W in stripes, X's rows already quantized by
// quantize_activations: q (M × K), d and s (M × K/32). With `parallel`, OpenMP threads split the
// stripes (the results do not depend on how). Only where quant_interleaved_available().
void quant_matmul_interleaved(QuantType type, const void* W, int N, int K, const int8_t* q, const float* d,
                              const int32_t* s, int M, float* Y, bool accumulate, bool parallel);

}  // namespace potop
