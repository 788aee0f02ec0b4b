// How many threads potop's kernels (OpenMP) and the GEMM library use. Both share one
// OpenMP runtime, so one setting governs all and threads never oversubscribe the cores.
#pragma once

namespace potop {

int hardware_threads();
// Sets the thread count for our kernels and for BLAS. n must be >= 1.
void set_threads(int n);
int get_threads();

}  // namespace potop
