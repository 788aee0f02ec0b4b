#include "models/gpt/gpt.h"

namespace potop {

namespace {

BodyConfig gpt_shape(const GPTConfig& c) { return gpt2_body(validated(c), /*causal=*/true); }

}  // namespace

GPT::GPT(const GPTConfig& config) : CausalDecoder(gpt_shape(config)), config_(config) {}

MemoryPlan GPT::plan(const GPTConfig& config, const BatchShape& shape) {
  return CausalDecoder::plan(gpt_shape(config), shape);
}

Layout GPT::parameter_layout(const GPTConfig& config) { return CausalDecoder::parameter_layout(gpt_shape(config)); }

std::unique_ptr<Model> GPT::replica() const { return std::unique_ptr<Model>(new GPT(*this, params_)); }

}  // namespace potop
