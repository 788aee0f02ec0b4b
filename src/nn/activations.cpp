#include "nn/activations.h"

#include <algorithm>

#include "core/error.h"

namespace potop {

namespace {

double rows_of(const ActivationPlan::Buffer& b, double token_rows, double memory_rows, double output_rows) {
  switch (b.rows) {
    case Rows::kTokens: return token_rows;
    case Rows::kMemory: return memory_rows;
    case Rows::kOutput: return output_rows < 0 ? token_rows : output_rows;
  }
  return 0;
}

}  // namespace

BufferId ActivationPlan::keep(const std::string& group, int64_t per_row, Rows rows) {
  POTOP_CHECK(per_row > 0, group + ": a buffer needs at least one float per row");
  buffers_.push_back({group, per_row, rows, false});
  return static_cast<BufferId>(buffers_.size() - 1);
}

BufferId ActivationPlan::scratch(const std::string& kind, int64_t per_row, Rows rows) {
  POTOP_CHECK(per_row > 0, kind + ": a buffer needs at least one float per row");
  for (size_t i = 0; i < buffers_.size(); ++i) {
    Buffer& b = buffers_[i];
    if (b.scratch && b.group == kind && b.rows == rows) {
      b.per_row = std::max(b.per_row, per_row);
      return static_cast<BufferId>(i);
    }
  }
  buffers_.push_back({kind, per_row, rows, true});
  return static_cast<BufferId>(buffers_.size() - 1);
}

std::vector<std::pair<std::string, double>> ActivationPlan::bytes(double token_rows, double memory_rows,
                                                                  double output_rows) const {
  std::vector<std::pair<std::string, double>> lines;
  double scratch = 0;
  for (const Buffer& b : buffers_) {
    const double n = 4.0 * static_cast<double>(b.per_row) * rows_of(b, token_rows, memory_rows, output_rows);
    if (b.scratch) {
      scratch += n;
      continue;
    }
    const std::string what = "activation " + b.group;
    auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.first == what; });
    if (it == lines.end()) lines.emplace_back(what, n);
    else it->second += n;
  }
  lines.emplace_back("backward scratch", scratch);
  return lines;
}

std::pair<std::string, double> ActivationPlan::largest(double token_rows, double memory_rows,
                                                       double output_rows) const {
  std::pair<std::string, double> best{"", 0.0};
  for (const Buffer& b : buffers_) {
    const double n = static_cast<double>(b.per_row) * rows_of(b, token_rows, memory_rows, output_rows);
    if (n > best.second) best = {b.group, n};
  }
  return best;
}

void Activations::bind(Part part, Arena& arena, int64_t token_rows, int64_t memory_rows) {
  const auto& buffers = plan_->buffers();
  pointers_.resize(buffers.size(), nullptr);
  Layout layout;
  std::vector<std::pair<size_t, size_t>> placed;  // (buffer, spec)
  for (size_t i = 0; i < buffers.size(); ++i) {
    const ActivationPlan::Buffer& b = buffers[i];
    const Part of = b.scratch ? Part::kScratch : b.rows == Rows::kOutput ? Part::kOutput : Part::kKept;
    if (of != part) continue;
    const int64_t rows = b.rows == Rows::kMemory ? memory_rows : b.rows == Rows::kOutput ? output_rows_ : token_rows;
    if (rows == 0) {
      pointers_[i] = nullptr;
      continue;
    }
    placed.emplace_back(i, layout.add("buffer " + std::to_string(i), {rows, b.per_row}));
  }
  arena = Arena(layout);
  for (const auto& [buffer, spec] : placed) pointers_[buffer] = arena.at(layout.specs()[spec]);
}

void Activations::reserve(int64_t token_rows, int64_t memory_rows) {
  POTOP_CHECK(plan_ != nullptr, "activations without a plan");
  if (token_rows <= token_rows_ && memory_rows <= memory_rows_) return;
  token_rows_ = std::max(token_rows_, token_rows);
  memory_rows_ = std::max(memory_rows_, memory_rows);
  bind(Part::kKept, kept_, token_rows_, memory_rows_);
  // Scratch sized for fewer rows is dropped now and made again by the next backward pass.
  scratch_ = Arena();
  scratch_tokens_ = scratch_memory_ = 0;
  for (size_t i = 0; i < plan_->buffers().size(); ++i)
    if (plan_->buffers()[i].scratch) pointers_[i] = nullptr;
}

void Activations::reserve_scratch() {
  if (scratch_.data() && scratch_tokens_ == token_rows_ && scratch_memory_ == memory_rows_) return;
  scratch_tokens_ = token_rows_, scratch_memory_ = memory_rows_;
  bind(Part::kScratch, scratch_, scratch_tokens_, scratch_memory_);
}

void Activations::reserve_output(int64_t rows) {
  POTOP_CHECK(plan_ != nullptr, "activations without a plan");
  if (rows <= output_rows_) return;
  output_rows_ = rows;
  bind(Part::kOutput, output_, 0, 0);
}

}  // namespace potop
