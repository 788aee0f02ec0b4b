// How many threads potop's kernels (OpenMP) and the GEMM library use. Both share one
// OpenMP runtime, so one setting governs all and threads never oversubscribe the cores.
#pragma once

namespace potop {

int hardware_threads();
// Sets the thread count for our kernels and for BLAS. n must be >= 1.
void set_threads(int n);
int get_threads();

// The --threads flag every command takes: 0 means all cores, and at most 4 per core. Throws
// potop::Error naming --threads otherwise.
void check_threads_flag(int threads);
// Checks the flag and makes it the thread count.
void apply_threads_flag(int threads);

}  // namespace potop
