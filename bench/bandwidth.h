// The memory bandwidth a batch-1 decode can use (bandwidth.cpp): the bound next to which the
// benchmark puts generation, since each new token reads every weight once.
#pragma once

#include <cstddef>

namespace potop::bench {

// GB/s (1e9 bytes) of `threads` threads summing one array of `bytes` bytes, far larger than any
// cache, each thread its own contiguous share (as a matrix-vector product streams a weight
// matrix); best of the passes made in about `seconds`. A STREAM-like read test: reads only,
// since decoding writes almost nothing.
double measure_read_bandwidth_gbs(int threads, std::size_t bytes, double seconds);

}  // namespace potop::bench
