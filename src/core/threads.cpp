#include "core/threads.h"

#include <omp.h>

#include <string>
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
  // A kernel called inside a parallel region (BatchParallel's replicas) runs on its caller's
  // thread instead of starting threads of its own: no oversubscription.
  omp_set_max_active_levels(1);
}

int get_threads() { return g_threads ? g_threads : omp_get_max_threads(); }

void check_threads_flag(int threads) {
  const int max_threads = 4 * hardware_threads();
  if (threads < 0 || threads > max_threads)
    throw Error("--threads must be between 0 (all cores) and " + std::to_string(max_threads) + " (got " +
                std::to_string(threads) + ")");
}

void apply_threads_flag(int threads) {
  check_threads_flag(threads);
  set_threads(threads > 0 ? threads : hardware_threads());
}

}  // namespace potop
