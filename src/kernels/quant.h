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
#include <vector>

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
// n of them at once (F16C where the CPU has it), with the same bits as the two above but for a
// NaN's payload.
void floats_to_halves(const float* x, int n, uint16_t* out);
void halves_to_floats(const uint16_t* h, int n, float* out);

// "f16", "q8_0", "q4_0"; parse_quant_type throws potop::Error naming `flag` for anything else.
std::string to_string(QuantType type);
QuantType parse_quant_type(const std::string& name, const std::string& flag);
// The distinct types of a model's quantized tensors, in order of first appearance: "q8_0", "q8_0+f16".
std::string quant_types_name(const std::vector<QuantType>& types);

// Bytes of one row of K weights. K must be a multiple of kQuantBlock for q8_0 and q4_0
// (quant_row_fits says whether it is).
size_t quant_row_bytes(QuantType type, int K);
bool quant_row_fits(QuantType type, int K);

// One row of K floats to its quantized form (quant_row_bytes(type, K) bytes at out), and back.
void quantize_row(QuantType type, const float* x, int K, void* out);
void dequantize_row(QuantType type, const void* row, int K, float* out);

// How q8_0 and q4_0 multiply (as llama.cpp's ggml_vec_dot_q8_0_q8_0 / _q4_0_q8_0 do): the
// activation vector x is quantized once per product, block by block, to int8 with a float scale
// (quantize_activations), then each block's 32 products are summed exactly in integers and
// scaled once by d_w · d_x. Against the dequantize-then-float product this adds the error of x's
// rounding, at most half a step d_x / 2 = max|x_block| / 254 per element (see the tests). f16
// weights multiply f32 x in float.
//
// The float sums of the integer kernels are fixed in order: block b goes to lane b mod 8 of eight
// partial sums, each lane adds fma(d_w · d_x, Σ_int, lane), and the lanes are added as
// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)). Every ISA and the scalar code do exactly
// this, so for finite inputs q8_0 and q4_0 results are bit-identical whatever the ISA, the
// thread count, or M (a row of quant_matmul is quant_gemv of that row), as long as quant_matmul
// takes an integer path. An interleaved W (QuantLayout below: a model's q8_0 and q4_0 matrices
// on AVX-512 VNNI) always does, at any M, keeping the same float order lane by lane. W as rows
// does always for K > 1024 and for M < 4; for K <= 1024 below M = 32, or below M = 4 (q8_0) and
// 8 (q4_0) when K / 32 blocks are not whole groups of 8. From there (and from M = 32 for f16, on
// every ISA) quant_matmul dequantizes W in panels of 256 rows and multiplies in f32 (sgemm),
// faster there; that is the dequantize-then-float product, without x's rounding, still
// independent of the thread count. The f16 float kernels sum in the order of their vector width:
// they agree across ISAs only to float rounding.

// Σ_k row[k] · x[k] over one quantized row, with the widest kernel this CPU runs.
float quant_dot(QuantType type, const void* row, const float* x, int K);

// y (N) = W x for W quantized as N rows of K (quant_row_bytes(type, K) bytes apart), x (K). The
// threads split the rows.
void quant_gemv(QuantType type, const void* W, int N, int K, const float* x, float* y);
// The same, adding into y when accumulate (y += W x).
void quant_gemv(QuantType type, const void* W, int N, int K, const float* x, float* y, bool accumulate);

// Y (M, N) = X (M, K) · Wᵀ (Y += X · Wᵀ when accumulate), W quantized as N rows of K
// (quant_row_bytes(type, K) bytes apart), X and Y row-major. quant_gemv is the M = 1 case. The
// threads split the N rows; the result does not depend on the thread count.
void quant_matmul(QuantType type, const void* W, int N, int K, const float* X, int M, float* Y, bool accumulate);

// How a q8_0 / q4_0 matrix lies in memory: as N rows (ggml's layout, the files'), or its rows
// interleaved sixteen at a time (quant_interleaved.h), which the AVX-512 VNNI kernel reads sixteen
// rows at once. Either gives the same results, bit for bit.
enum class QuantLayout { kRows, kInterleaved };
// The layout quant_matmul reads fastest on this CPU: interleaved for q8_0 and q4_0 with AVX-512 VNNI.
QuantLayout quant_best_layout(QuantType type);
// quant_matmul of W in `layout`. An interleaved W on a CPU without AVX-512 VNNI is turned back into
// rows for every call (correct, slow: for the tests).
void quant_matmul(QuantType type, QuantLayout layout, const void* W, int N, int K, const float* X, int M, float* Y,
                  bool accumulate);

// The activations' quantization (llama.cpp's quantize_row_q8_0, with the scale kept in f32): per
// block of 32, d = max|x| / 127, q = x · (127 / max|x|) rounded to nearest even (0 for an all-zero
// block), sum = Σ q. K a multiple of 32; q (K), d and sum (K / 32).
void quantize_activations(const float* x, int K, int8_t* q, float* d, int32_t* sum);

// The kernels one by one, for the tests. An ISA this CPU lacks is not available
// (quant_isa_available) and must not be called.
//   kAvx2        AVX2 + FMA + F16C: _mm256_maddubs_epi16
//   kAvx512      AVX-512 F/BW/VL: 512-bit maddubs, a group of eight blocks at a time
//   kAvx512Vnni  the same with VNNI's vpdpbusd (and quant_interleaved.h's kernel for interleaved W)
enum class QuantIsa { kScalar, kAvx2, kAvx512, kAvx512Vnni };
bool quant_isa_available(QuantIsa isa);
float quant_dot_with(QuantIsa isa, QuantType type, const void* row, const float* x, int K);
void quant_matmul_with(QuantIsa isa, QuantType type, const void* W, int N, int K, const float* X, int M, float* Y,
                       bool accumulate);
// The exact integer sums Σ_j w_j · q_j of each block of a q8_0 / q4_0 row (K / 32 of them) against
// activations quantized by quantize_activations: the same integers on every ISA.
void quant_block_sums_with(QuantIsa isa, QuantType type, const void* row, const int8_t* q, const int32_t* sum, int K,
                           int32_t* out);
// The ISA quant_dot uses: "avx512vnni", "avx512", "avx2" or "scalar".
const char* quant_isa_name();

}  // namespace potop
