// Per-kernel wall-clock profile (`potop train --profile`, potop_bench --profile).
//
// The model wraps each kernel call in POTOP_PROFILED("name", call); while profiling is off that
// costs one predictable branch. While on, each named section accumulates calls and seconds, and
// print_profile() shows them per step as a share of the "step" section that the trainer opens
// around each training step. Sections nest (a step contains forward, forward contains kernels);
// the table shows each section's inclusive time. Sections open and close on the thread that
// calls the kernels (which then fan out to OpenMP threads); when batch-parallel replicas each
// run the whole model on one thread, only the first thread's replica is recorded.
#pragma once
#include <chrono>
#include <cstdio>

namespace potop::profile {

void enable(bool on);
bool enabled();
void reset();  // forget everything measured so far

// Sections are identified by their name's address: pass string literals.
int section_id(const char* name);
void add(int id, double seconds);

class Scope {
 public:
  explicit Scope(const char* name) : id_(enabled() ? section_id(name) : -1) {
    if (id_ >= 0) start_ = std::chrono::steady_clock::now();
  }
  ~Scope() {
    if (id_ >= 0) add(id_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  int id_;
  std::chrono::steady_clock::time_point start_;
};

// Suspends profiling for its lifetime (evaluation passes inside a profiled training run).
class Pause {
 public:
  Pause() : was_(enabled()) { enable(false); }
  ~Pause() { enable(was_); }
  Pause(const Pause&) = delete;
  Pause& operator=(const Pause&) = delete;

 private:
  bool was_;
};

// The table: section, calls per step, ms per step, % of the "step" section, nested sections
// indented under their parent in the order first seen. Steps are the calls of a top-level "step"
// section, and only what ran inside it is shown (an evaluation pass between steps is not); with
// no "step", every section's total is.
void print(std::FILE* out);

}  // namespace potop::profile

// Times one statement (usually one kernel call) as section `name` while profiling is on.
#define POTOP_PROFILED(name, ...)                  \
  do {                                             \
    const ::potop::profile::Scope potop_scope_(name); \
    __VA_ARGS__;                                   \
  } while (0)
