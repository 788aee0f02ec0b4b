// Shared helpers for potop's unit tests: random inputs, error measures, finite differences,
// temporary directories, and paths to the shared corpus and the PyTorch oracle.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <system_error>
#include <unistd.h>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/rng.h"

namespace potop::testing {

inline std::vector<float> random_vector(size_t n, uint64_t seed, float scale = 1.0f) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(rng.normal()) * scale;
  return v;
}

// Normalised mean squared error Σ(a-b)² / Σb² (ggml's NMSE): scale-free, so one threshold fits
// tensors of any magnitude. Returns 0 when both are all zero.
inline double nmse(const float* a, const double* ref, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    num += (a[i] - ref[i]) * (a[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den == 0 ? num : num / den;
}

// Bit-for-bit equality (NaNs and signed zeros included), for results that must not depend on
// the thread count or the run.
inline bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return false;
  }
  return true;
}

inline double max_abs_diff(const float* a, const double* b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// Central finite difference of a scalar function f with respect to x[i]:
//   (f(x + h e_i) - f(x - h e_i)) / 2h, evaluated in double where f supports it.
inline double central_difference(const std::function<double()>& f, float* x, size_t i, float h) {
  const float saved = x[i];
  x[i] = saved + h;
  const double plus = f();
  x[i] = saved - h;
  const double minus = f();
  x[i] = saved;
  return (plus - minus) / (2.0 * static_cast<double>(h));
}

// The checkout's root (tests/support/source_dir.cpp: the one file compiled with its path, so that
// every other test object is the same in any checkout and ccache hands it to the next one).
std::filesystem::path source_dir();

// The shared data directory: $POTOP_SHARED_DIR when set (point it at a missing directory to see
// what runs without ../shared), else ../shared beside the checkout.
inline std::filesystem::path shared_dir() {
  if (const char* dir = std::getenv("POTOP_SHARED_DIR"); dir && *dir) return dir;
  return source_dir().parent_path() / "shared";
}

// <shared>/data/potop.txt, or empty when absent: tests that need it then GTEST_SKIP, which users
// without ../shared see as a clean skip and CI, which always has it, fails (scripts/check-skips.py).
inline std::filesystem::path shared_corpus() {
  auto p = shared_dir() / "data" / "potop.txt";
  return std::filesystem::exists(p) ? p : std::filesystem::path{};
}

// A fresh empty directory under the system temp dir, for one test, removed with all it holds when
// the TempDir goes out of scope: also when an ASSERT_* fails (it returns from the test) or the test
// throws, so that no run leaves potop_test_* directories behind. The name carries the process id
// because ctest runs the tests in parallel, each in its own process. Movable, so that a fixture can
// create its directory in SetUp; not copyable, since only one owner may remove the tree.
class TempDir {
 public:
  TempDir() = default;  // owns nothing until a named TempDir is moved in
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / ("potop_test_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);  // left by a crashed process that had the same id
    std::filesystem::create_directories(path_);
  }
  TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  TempDir& operator=(TempDir&& other) noexcept {
    if (this != &other) {
      remove();
      path_ = std::exchange(other.path_, {});
    }
    return *this;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { remove(); }

  const std::filesystem::path& path() const { return path_; }
  // So that a TempDir reads like the path it owns: `dir / "file"`, or an argument of a function
  // that takes a path.
  operator const std::filesystem::path&() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& p) const { return path_ / p; }

 private:
  void remove() noexcept {
    // The error_code overload: a destructor must not throw, and a failed cleanup fails no test.
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  std::filesystem::path path_;
};

// Runs fn and returns the message of the potop::Error it throws, or "(no error)" (and a test
// failure) when it throws none.
template <typename Fn>
std::string error_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a potop::Error";
  return "(no error)";
}

// Writes bytes to a file exactly (binary mode).
inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace potop::testing
