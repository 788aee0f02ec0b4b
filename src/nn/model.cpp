#include "nn/model.h"

#include "core/error.h"
#include "nn/activations.h"

namespace potop {

double MemoryPlan::total() const {
  double sum = 0;
  for (const Line& l : lines) sum += l.bytes;
  return sum;
}

double MemoryPlan::bytes(const std::string& what) const {
  for (const Line& l : lines)
    if (l.what == what) return l.bytes;
  return 0;
}

void MemoryPlan::add_parameters(const Layout& params) {
  lines.push_back({"parameters", double(params.total_bytes()), /*shared=*/true});
  lines.push_back({"gradients", double(params.total_bytes())});
  for (const TensorSpec& s : params.specs())
    if (double(s.numel) > largest_floats) largest_tensor = s.name, largest_floats = double(s.numel);
}

void MemoryPlan::add_activations(const ActivationPlan& acts, double token_rows, double memory_rows,
                                 const std::string& prefix, double output_rows) {
  for (const auto& [what, bytes] : acts.bytes(token_rows, memory_rows, output_rows))
    lines.push_back({prefix + what, bytes});
  const auto [group, floats] = acts.largest(token_rows, memory_rows, output_rows);
  if (floats > largest_floats) largest_tensor = group, largest_floats = floats, largest_is_activation = true;
}

}  // namespace potop
