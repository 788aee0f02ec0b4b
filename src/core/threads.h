// How many threads potop's kernels (OpenMP) and the GEMM library use. Both share one
// OpenMP runtime, so one setting governs all and threads never oversubscribe the cores.
#pragma once

#include <cstddef>

namespace potop {

// Elementwise loops over fewer floats than this run on one thread: below it, starting a parallel
// region costs more than it saves.
inline constexpr size_t kParallelMinFloats = size_t{1} << 14;

// The CPUs potop may use: those of its affinity mask, within its cgroup's CPU quota.
int hardware_threads();

// OpenMP threads that finish early spin before they sleep; libgomp's default is 300,000 pauses
// (milliseconds). When another process holds a core, a spinning thread keeps the core its
// straggling partner needs, and every barrier waits a time slice. 3,000 pauses (microseconds)
// measured best on a 2-core machine (bench/busy_core.py, docs/performance.md): beside a busy core
// training ran 1.34x faster than with libgomp's spin, and on the quiet machine no slower (sampling
// faster); 0 (sleep at once) made sampling 12x slower on the quiet machine.
inline constexpr const char* kOpenMPSpinCount = "3000";
// Called first thing in main: unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT, sets
// GOMP_SPINCOUNT to kOpenMPSpinCount and starts this program again with the same arguments.
void bound_openmp_spinning(char** argv);
// Sets the thread count for our kernels and for BLAS. n must be >= 1.
void set_threads(int n);
int get_threads();

// The --threads flag every command takes: 0 means all cores, and at most 4 per core. Throws
// potop::Error naming --threads otherwise.
void check_threads_flag(int threads);
// Checks the flag and makes it the thread count.
void apply_threads_flag(int threads);

}  // namespace potop
