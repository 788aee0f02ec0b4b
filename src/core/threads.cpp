#include "core/threads.h"

#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "core/error.h"

namespace potop {

namespace {

int g_threads = 0;

// The CPUs a cgroup's quota allows (cgroup v2's cpu.max "200000 100000" is 2; v1's
// cfs_quota_us / cfs_period_us), or 0 when there is no quota: a container given 2 of a host's 64
// cores must not start 64 threads that take turns.
int cgroup_cpu_limit() {
  auto cpus = [](double quota, double period) { return quota > 0 && period > 0 ? static_cast<int>(std::ceil(quota / period)) : 0; };
  std::string group;  // this process's cgroup v2 path, "0::/path"
  std::ifstream self("/proc/self/cgroup");
  for (std::string line; std::getline(self, line);)
    if (line.starts_with("0::")) group = line.substr(3);
  // The process's own group and each one above it: a limit anywhere on the way up applies.
  for (std::string dir = group; !group.empty(); dir = dir.substr(0, dir.rfind('/'))) {
    std::ifstream max("/sys/fs/cgroup" + dir + "/cpu.max");
    std::string quota;
    double period = 0;
    if (max >> quota >> period && quota != "max") return cpus(std::atof(quota.c_str()), period);
    if (dir.empty()) break;
  }
  std::ifstream q("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), p("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  double quota = 0, period = 0;
  if (q >> quota && p >> period) return cpus(quota, period);
  return 0;
}

}  // namespace

int hardware_threads() {
  // The CPUs this process may run on (taskset, a cpuset), not all the machine's, within a quota.
  int n = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  const int limit = cgroup_cpu_limit();
  if (limit > 0 && limit < n) n = limit;
  return n > 0 ? n : 1;
}

void bound_openmp_spinning(char** argv) {
  // libgomp reads these once, as it loads: the only way to set them is in the environment of a
  // new image of this program. A user's choice wins; so does valgrind, whose exec would lose it.
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload && std::string(preload).find("vgpreload") != std::string::npos) return;
  if (setenv("GOMP_SPINCOUNT", kOpenMPSpinCount, 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure: go on with libgomp's default
  unsetenv("GOMP_SPINCOUNT");
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
