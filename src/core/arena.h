// One block of memory carved into named tensors. A Layout is the plan (names, shapes,
// offsets); an Arena is the block. Parameters, gradients and the two AdamW moments use one
// Layout each in their own Arena, so zeroing gradients is one memset, an optimizer update is
// one loop over a flat array, and a checkpoint is a walk over the Layout.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"

namespace potop {

// How a parameter's values start (model/parameters.h draws them in layout order).
struct TensorInit {
  enum class Kind { kZeros, kOnes, kNormal };
  Kind kind = Kind::kZeros;
  double std = 0.0;  // kNormal: values are N(0, std²)

  static TensorInit zeros() { return {}; }
  static TensorInit ones() { return {Kind::kOnes, 0.0}; }
  static TensorInit normal(double std) { return {Kind::kNormal, std}; }
};

struct TensorSpec {
  std::string name;
  Shape shape;
  size_t offset = 0;  // in floats, from the start of the block
  size_t numel = 0;
  // Parameters only: how the tensor is initialised, and whether AdamW decays it (matrices and
  // embeddings do; biases and LayerNorm gains do not). Stored here, never guessed from the name.
  TensorInit init{};
  bool decay = false;
  // The (in, out) weight of a linear map x·W (attention and feed-forward projections): the
  // tensors `potop quantize` may store quantized, as rows of W's transpose (kernels/quant.h).
  bool matrix = false;
  // A (rows, K) table that is also an output layer, x · tableᵀ (the LM head tied to the token
  // embedding, or a head of its own): a quantized model multiplies by a quantized copy of it
  // (ParameterSet::quantize_output_tables), while lookups read its float rows.
  bool output_table = false;
};

class Layout {
 public:
  // Adds a tensor and returns its index. Every tensor starts on a 64-byte boundary so SIMD
  // loads never straddle two tensors' cache lines.
  size_t add(const std::string& name, const Shape& shape, TensorInit init = {}, bool decay = false);
  // Marks tensor `index` as a linear map's (in, out) weight (TensorSpec::matrix).
  void mark_matrix(size_t index);
  // Marks tensor `index` as an output layer's (rows, K) table (TensorSpec::output_table).
  void mark_output_table(size_t index);
  const std::vector<TensorSpec>& specs() const { return specs_; }
  const TensorSpec* find(const std::string& name) const;
  size_t total_floats() const { return total_; }
  size_t total_bytes() const { return total_ * sizeof(float); }
  // Sum of the tensors' own sizes (without alignment padding).
  size_t count() const;

 private:
  std::vector<TensorSpec> specs_;
  std::unordered_map<std::string, size_t> index_;
  size_t total_ = 0;
};

// How an Arena's block goes back. Large blocks are mapped from the kernel, which zeroes a page
// when it is first touched: a tensor nothing writes (a quantized model's float copy of a
// quantized matrix) costs no memory.
struct ArenaFree {
  size_t mapped_bytes = 0;  // 0: from aligned_alloc
  void operator()(float* p) const;
};

class Arena {
 public:
  Arena() = default;
  explicit Arena(const Layout& layout);  // zero-filled

  float* data() const { return block_.get(); }
  size_t floats() const { return floats_; }
  size_t bytes() const { return floats_ * sizeof(float); }
  float* at(const TensorSpec& spec) const { return block_.get() + spec.offset; }
  TensorView view(const TensorSpec& spec) const { return {spec.name, spec.shape, at(spec)}; }
  void zero();

 private:
  std::unique_ptr<float, ArenaFree> block_;
  size_t floats_ = 0;
};

// Human-readable size: "1.50 MiB".
std::string format_bytes(size_t bytes);

}  // namespace potop
