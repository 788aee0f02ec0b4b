// What the machine has: its physical memory, for checks that refuse work that cannot fit before
// anything is allocated.
#pragma once
#include <string>

namespace potop {

// Total physical memory in bytes (0 when unknown).
double physical_memory_bytes();

// "1.5 GiB": a size in GiB with one decimal, for messages.
std::string format_gib(double bytes);

}  // namespace potop
