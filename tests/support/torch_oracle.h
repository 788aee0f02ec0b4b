// Running the PyTorch oracle (tests/torch/*.py under Debian's /usr/bin/python3, which has torch
// and numpy; scripts/setup.sh --all installs them) and comparing potop's float tensors with its results.
// torch is a required test dependency: a script that fails is a test failure, never a skip.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "core/safetensors.h"
#include "nn/parameters.h"
#include "support/testing.h"

namespace potop::testing {

// The Python that runs the oracle scripts: one process per test process
// (tests/torch/oracle_server.py), started at the first script, because importing torch costs
// about 1.6 s and a script's own work a fraction of that. CTest runs the PyTorch tests of a group
// in one process (tests/CMakeLists.txt), so the group pays for torch once.
class PythonOracle {
 public:
  static PythonOracle& instance() {
    static PythonOracle oracle;
    return oracle;
  }
  PythonOracle(const PythonOracle&) = delete;
  PythonOracle& operator=(const PythonOracle&) = delete;
  ~PythonOracle() { stop(); }

  // Runs <source dir>/<script> <args...>, its output going to the test's. Returns the script's
  // exit status, or 128 + the signal that killed the server (-1 when it could not start).
  int run(const std::string& script, const std::vector<std::string>& args) {
    if (pid_ <= 0 && !start()) return -1;
    nlohmann::json request = nlohmann::json::array({(source_dir() / script).string()});
    for (const std::string& a : args) request.push_back(a);
    const std::string line = request.dump() + "\n";
    std::fflush(stdout);
    std::fflush(stderr);
    if (!write_all(line)) return stop();
    std::string reply;
    char c;
    while (::read(reply_fd_, &c, 1) == 1 && c != '\n') reply += c;
    if (reply.empty()) return stop();  // the server died (a crash in torch): the next script starts another
    return std::atoi(reply.c_str());
  }

 private:
  PythonOracle() = default;

  bool start() {
    int request[2], reply[2];
    if (::pipe(request) != 0) return false;
    if (::pipe(reply) != 0) {
      ::close(request[0]), ::close(request[1]);
      return false;
    }
    const std::string server = (source_dir() / "tests/torch/oracle_server.py").string();
    const std::string in = std::to_string(request[0]), out = std::to_string(reply[1]);
    std::signal(SIGPIPE, SIG_IGN);  // a server that died answers a write with EPIPE, not death
    std::fflush(stdout);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(request[1]), ::close(reply[0]);
      ::execl(POTOP_PYTHON, POTOP_PYTHON, server.c_str(), in.c_str(), out.c_str(), static_cast<char*>(nullptr));
      std::perror(POTOP_PYTHON);
      ::_exit(127);
    }
    ::close(request[0]), ::close(reply[1]);
    if (pid_ < 0) {
      ::close(request[1]), ::close(reply[0]);
      return false;
    }
    request_fd_ = request[1], reply_fd_ = reply[0];
    return true;
  }

  bool write_all(const std::string& s) {
    for (size_t done = 0; done < s.size();) {
      const ssize_t n = ::write(request_fd_, s.data() + done, s.size() - done);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // Ends the server (its requests closed, it returns) and gives how it ended: -1, or 128 + the
  // signal that killed it.
  int stop() {
    if (pid_ <= 0) return -1;
    ::close(request_fd_), ::close(reply_fd_);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  }

  pid_t pid_ = -1;
  int request_fd_ = -1, reply_fd_ = -1;
};

// Runs POTOP_PYTHON <source dir>/<script> <args...> (in the test process's oracle server), its
// output going to the test's. Returns the exit status (non-zero also when the interpreter is
// missing or was killed).
inline int run_python(const std::string& script, const std::vector<std::string>& args) {
  return PythonOracle::instance().run(script, args);
}

// How far potop's tensor is from the reference.
struct Diff {
  std::string name;
  size_t n = 0;
  double nmse = 0;      // Σ(a-b)² / Σb² (testing::nmse)
  double max_abs = 0;   // max |a - b|
  double ref_rms = 0;   // √(Σb² / n), for scale
  bool finite = true;   // every element of a and b finite
  std::string str() const {
    std::ostringstream s;
    s << name << " (" << n << "): nmse " << nmse << ", max |diff| " << max_abs << ", ref rms " << ref_rms;
    if (!finite) s << ", NOT FINITE";
    return s.str();
  }
};

inline Diff diff(const std::string& name, std::span<const float> a, std::span<const float> ref) {
  Diff d;
  d.name = name;
  d.n = ref.size();
  EXPECT_EQ(a.size(), ref.size()) << name << ": potop and the reference differ in size";
  const size_t n = std::min(a.size(), ref.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(ref[i])) {
      if (!(a[i] == ref[i])) d.finite = false;  // equal infinities are a match
      continue;
    }
    const double e = static_cast<double>(a[i]) - ref[i];
    num += e * e;
    den += static_cast<double>(ref[i]) * ref[i];
    d.max_abs = std::max(d.max_abs, std::fabs(e));
  }
  d.nmse = den == 0 ? num : num / den;
  d.ref_rms = n ? std::sqrt(den / n) : 0;
  return d;
}

// Collects comparisons of one group of tensors and checks them against one NMSE bound,
// reporting the worst tensor (and every failing one). A group that compared nothing fails: a
// misnamed tensor or an empty case must not pass as "no tensor over the bound". check() must be
// called: a report destroyed unchecked is a failure too, so that a test cannot collect
// comparisons and forget to judge them.
class DiffReport {
 public:
  DiffReport(std::string group, double max_nmse) : group_(std::move(group)), max_nmse_(max_nmse) {}
  DiffReport(const DiffReport&) = delete;
  DiffReport& operator=(const DiffReport&) = delete;
  ~DiffReport() {
    if (!checked_) ADD_FAILURE() << group_ << ": DiffReport destroyed without check()";
  }
  void add(const Diff& d) {
    ++compared_;
    if (!worst_ || d.nmse > worst_->nmse || !d.finite) worst_ = d;
    if (!d.finite || !(d.nmse <= max_nmse_)) failures_.push_back(d);
  }
  void add(const std::string& name, std::span<const float> a, std::span<const float> ref) { add(diff(name, a, ref)); }
  double worst_nmse() const { return worst_ ? worst_->nmse : 0.0; }
  size_t compared() const { return compared_; }
  // Prints the worst tensor and fails the test naming every tensor over the bound, or naming
  // the group when it compared no tensor at all.
  void check() {
    checked_ = true;
    if (compared_ == 0) {
      ADD_FAILURE() << group_ << ": compared no tensor (a misnamed or empty group checks nothing)";
      return;
    }
    std::printf("  %-28s worst %s (%zu tensors)\n", group_.c_str(), worst_->str().c_str(), compared_);
    for (const Diff& d : failures_)
      ADD_FAILURE() << group_ << ": " << d.str() << " exceeds nmse " << max_nmse_;
  }

 private:
  std::string group_;
  double max_nmse_;
  size_t compared_ = 0;
  bool checked_ = false;
  std::optional<Diff> worst_;
  std::vector<Diff> failures_;
};

inline std::vector<float> f32_vector(const SafetensorsFile& file, const std::string& name) {
  auto s = file.f32(name);
  return {s.begin(), s.end()};
}

// A model's init made so that a wrong kernel cannot pass a parity test by accident: matrices and
// embeddings (init normal) scaled by 8 — at std 0.02 a small model is nearly linear and attention
// nearly uniform, which would hide a wrong scale or mask — and biases and LayerNorm gains moved
// by N(0, 0.1), which would show a bias never added. `unscaled` names tensors kept at their init's
// scale (a table the paper scales by √C on input).
inline void spread_init(ParameterSet& params, uint64_t seed, const std::vector<std::string>& unscaled = {}) {
  Rng rng(seed + 1000);
  for (const TensorSpec& spec : params.layout().specs()) {
    float* w = params.values().at(spec);
    const bool normal = spec.init.kind == TensorInit::Kind::kNormal;
    if (normal && std::find(unscaled.begin(), unscaled.end(), spec.name) != unscaled.end()) continue;
    for (size_t i = 0; i < spec.numel; ++i) {
      if (normal) w[i] *= 8.0f;
      else w[i] += static_cast<float>(0.1 * rng.normal());
    }
  }
}

}  // namespace potop::testing
