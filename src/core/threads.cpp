#include "core/threads.h"

#include <omp.h>

#include <thread>

#include "core/error.h"

namespace potop {

namespace {
int g_threads = 0;
}

int hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

void set_threads(int n) {
  POTOP_CHECK(n >= 1);
  g_threads = n;
  omp_set_num_threads(n);
  omp_set_dynamic(0);
}

int get_threads() { return g_threads ? g_threads : omp_get_max_threads(); }

}  // namespace potop
