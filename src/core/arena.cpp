#include "core/arena.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/error.h"
#include "core/pages.h"

namespace potop {

namespace {
constexpr size_t kAlignFloats = 16;  // 64 bytes
}

std::string shape_string(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

size_t Layout::add(const std::string& name, const Shape& shape, TensorInit init, bool decay) {
  POTOP_CHECK(!index_.count(name), "duplicate tensor name " + name);
  for (int64_t d : shape) POTOP_CHECK(d > 0, name + " has a non-positive dimension");
  TensorSpec spec{name, shape, total_, shape_numel(shape), init, decay};
  total_ += (spec.numel + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
  index_[name] = specs_.size();
  specs_.push_back(std::move(spec));
  return specs_.size() - 1;
}

const TensorSpec* Layout::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &specs_[it->second];
}

size_t Layout::count() const {
  size_t n = 0;
  for (const auto& s : specs_) n += s.numel;
  return n;
}

void Layout::mark_matrix(size_t index) {
  POTOP_CHECK(index < specs_.size() && specs_[index].shape.size() == 2, "only a 2-D tensor is a matrix");
  specs_[index].matrix = true;
}

void ArenaFree::operator()(float* p) const {
  if (mapped_bytes) unmap_pages(p, mapped_bytes);
  else std::free(p);
}

Arena::Arena(const Layout& layout) : floats_(layout.total_floats()) {
  size_t bytes = std::max<size_t>(floats_, kAlignFloats) * sizeof(float);
  bytes = (bytes + 63) / 64 * 64;
  if (bytes >= kMapBytes) {  // zero-filled, page-aligned, faulted in as it is touched
    block_ = std::unique_ptr<float, ArenaFree>(static_cast<float*>(map_pages(bytes)), ArenaFree{bytes});
    return;
  }
  auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (!p) throw std::bad_alloc();
  block_.reset(p);
  zero();
}

void Arena::zero() {
  if (block_) std::memset(block_.get(), 0, floats_ * sizeof(float));
}

void Layout::mark_output_table(size_t index) {
  POTOP_CHECK(index < specs_.size() && specs_[index].shape.size() == 2, "only a 2-D tensor is an output table");
  specs_[index].output_table = true;
}

std::string format_bytes(size_t bytes) {
  char buf[32];
  double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024 * 1024));
  else if (b >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.2f MiB", b / (1024.0 * 1024));
  else if (b >= 1024.0) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else std::snprintf(buf, sizeof buf, "%zu B", bytes);
  return buf;
}

}  // namespace potop
