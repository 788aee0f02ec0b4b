#include "core/profile.h"

#include <omp.h>

#include <cstring>
#include <string>
#include <vector>

namespace potop::profile {

namespace {

// A section is a name under a parent section: "qkv" inside "forward" and inside "backward" are
// two sections.
struct Section {
  const char* name;
  int parent;  // -1 at the top
  int depth;
  long calls = 0;
  double seconds = 0;
};

bool g_enabled = false;
std::vector<Section> g_sections;
std::vector<int> g_open;  // the sections entered and not yet left, innermost last

}  // namespace

void enable(bool on) { g_enabled = on; }
// Inside a parallel region (batch-parallel replicas) only the first thread records: its
// replica's kernels stand for all of them, and the tables stay single-threaded.
bool enabled() { return g_enabled && omp_get_thread_num() == 0; }

void reset() {
  g_sections.clear();
  g_open.clear();
}

int section_id(const char* name) {
  const int parent = g_open.empty() ? -1 : g_open.back();
  int id = -1;
  for (size_t i = 0; i < g_sections.size() && id < 0; ++i) {
    const Section& s = g_sections[i];
    if (s.parent == parent && (s.name == name || std::strcmp(s.name, name) == 0)) id = static_cast<int>(i);
  }
  if (id < 0) {
    g_sections.push_back(Section{name, parent, static_cast<int>(g_open.size())});
    id = static_cast<int>(g_sections.size() - 1);
  }
  g_open.push_back(id);
  return id;
}

void add(int id, double seconds) {
  g_open.pop_back();
  g_sections[id].calls += 1;
  g_sections[id].seconds += seconds;
}

void print(std::FILE* out) {
  double step_seconds = 0;
  long steps = 0;
  for (const Section& s : g_sections) {
    if (s.parent == -1 && std::strcmp(s.name, "step") == 0) step_seconds = s.seconds, steps = s.calls;
  }
  const double per = steps > 0 ? 1.0 / steps : 1.0;
  std::fprintf(out, "profile (%s %ld steps; times are inclusive):\n", steps > 0 ? "per step, mean of" : "totals,", steps);
  std::fprintf(out, "  %-30s %9s %11s %7s\n", "section", "calls", "ms", "%");
  // Depth first: each section, then its children in the order first seen. With a "step" section,
  // only it and what ran inside it (not, say, evaluation passes between steps).
  int root = -1;
  for (size_t i = 0; i < g_sections.size(); ++i)
    if (g_sections[i].parent == -1 && std::strcmp(g_sections[i].name, "step") == 0) root = static_cast<int>(i);
  auto show = [&](auto& self, int parent) -> void {
    for (size_t i = 0; i < g_sections.size(); ++i) {
      const Section& s = g_sections[i];
      if (s.parent != parent) continue;
      const std::string name = std::string(2 * s.depth, ' ') + s.name;
      std::fprintf(out, "  %-30s %9.1f %11.3f %6.1f%%\n", name.c_str(), s.calls * per, s.seconds * per * 1e3,
                   step_seconds > 0 ? 100.0 * s.seconds / step_seconds : 0.0);
      self(self, static_cast<int>(i));
    }
  };
  if (root < 0) {
    show(show, -1);
    return;
  }
  const Section& s = g_sections[root];
  std::fprintf(out, "  %-30s %9.1f %11.3f %6.1f%%\n", s.name, s.calls * per, s.seconds * per * 1e3, 100.0);
  show(show, root);
}

}  // namespace potop::profile
