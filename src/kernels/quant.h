// Quantized weights for generation, in llama.cpp's block formats and with its rounding, so that a
// tensor quantized here is the tensor llama.cpp would make (issue 26):
//   f16   one IEEE half per weight                                  16 bits per weight
//   q8_0  blocks of 32: one f16 scale d, 32 int8 q;  w = d·q          8.5 bits per weight
//   q4_0  blocks of 32: one f16 scale d, 32 4-bit q; w = d·(q − 8)    4.5 bits per weight
// A quantized matrix is stored as N rows of K weights (the layout of a GGUF/ggml tensor, whose
// first dimension is the one a dot product runs along), so that each block is 32 consecutive
// weights of one output's dot product. Generation multiplies one vector by every matrix and is
// bound by memory bandwidth: fewer bytes per weight is the only way to go faster, and the
// kernels below read each block once.
//
// Inference only: quantized weights are not trained (there is no backward pass), and a quantized
// model refuses --resume.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace potop {

enum class QuantType { kF16, kQ8_0, kQ4_0 };

inline constexpr int kQuantBlock = 32;  // weights per q8_0 / q4_0 block

struct BlockQ8_0 {
  uint16_t d;  // the scale, as f16
  int8_t qs[kQuantBlock];
};
struct BlockQ4_0 {
  uint16_t d;                   // the scale, as f16
  uint8_t qs[kQuantBlock / 2];  // weight j in the low nibble of byte j, weight j + 16 in its high nibble
};
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18, "llama.cpp's block sizes");

// IEEE 754 half precision, rounding to nearest even (as F16C's vcvtps2ph and numpy do),
// subnormals, infinities and NaN included.
uint16_t f32_to_f16(float x);
float f16_to_f32(uint16_t h);

// "f16", "q8_0", "q4_0"; parse_quant_type throws potop::Error naming `flag` for anything else.
std::string to_string(QuantType type);
QuantType parse_quant_type(const std::string& name, const std::string& flag);

// Bytes of one row of K weights. K must be a multiple of kQuantBlock for q8_0 and q4_0
// (quant_row_fits says whether it is).
size_t quant_row_bytes(QuantType type, int K);
bool quant_row_fits(QuantType type, int K);

// One row of K floats to its quantized form (quant_row_bytes(type, K) bytes at out), and back.
void quantize_row(QuantType type, const float* x, int K, void* out);
void dequantize_row(QuantType type, const void* row, int K, float* out);

// Σ_k row[k] · x[k] over one quantized row, with the widest kernel this CPU runs.
float quant_dot(QuantType type, const void* row, const float* x, int K);

// y (N) = W x for W quantized as N rows of K (quant_row_bytes(type, K) bytes apart), x (K). The
// threads split the rows.
void quant_gemv(QuantType type, const void* W, int N, int K, const float* x, float* y);

// The kernels one by one, for the tests: each ISA's dot against the scalar one. An ISA this CPU
// lacks is not available (quant_isa_available) and must not be called.
enum class QuantIsa { kScalar, kAvx2, kAvx512 };
bool quant_isa_available(QuantIsa isa);
float quant_dot_with(QuantIsa isa, QuantType type, const void* row, const float* x, int K);
// The ISA quant_dot uses: "avx512", "avx2" or "scalar".
const char* quant_isa_name();

}  // namespace potop
