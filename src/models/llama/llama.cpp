#include "models/llama/llama.h"

namespace potop {

Llama::Llama(const LlamaConfig& config) : CausalDecoder(llama_body(config)), config_(config) {}

MemoryPlan Llama::plan(const LlamaConfig& config, const BatchShape& shape) {
  return CausalDecoder::plan(llama_body(config), shape);
}

Layout Llama::parameter_layout(const LlamaConfig& config) { return CausalDecoder::parameter_layout(llama_body(config)); }

std::unique_ptr<Model> Llama::replica() const { return std::unique_ptr<Model>(new Llama(*this, params_)); }

}  // namespace potop
