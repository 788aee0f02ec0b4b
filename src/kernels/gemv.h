// Vector × matrix for batch-1 generation: y (N) = alpha · x (K) · W (K, N) + beta · y, W row-major
// with row stride ldw. Each new token multiplies one row vector by every weight matrix, so this
// is the whole cost of KV-cached generation, and it is bound by memory bandwidth: each weight is
// read once and used once.
//
// The threads split W's rows, so each streams one contiguous block of memory, keeping a partial y
// in L1; the partials are then added in thread order (the result is the same for a given thread
// count). OpenBLAS's sgemv (used before) splits the columns and sustained ~20% less bandwidth
// here on these shapes (docs/performance.md).
#pragma once

namespace potop {

void sgemv_rows(int K, int N, float alpha, const float* x, const float* W, int ldw, float beta, float* y);

}  // namespace potop
