// Tensors are views: a pointer into memory someone else owns, plus a name and a shape.
// Storage is planned up front by a Layout and owned by an Arena (arena.h); kernels take raw
// pointers and sizes, llm.c style, so a view is only what the model needs to find them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace potop {

using Shape = std::vector<int64_t>;

inline size_t shape_numel(const Shape& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

std::string shape_string(const Shape& shape);  // "(4, 128)"

struct TensorView {
  std::string name;
  Shape shape;
  float* data = nullptr;

  size_t numel() const { return shape_numel(shape); }
  float* begin() const { return data; }
  float* end() const { return data + numel(); }
};

}  // namespace potop
