// The GPT: the causal decoder (models/decoder/causal_decoder.h) in GPT-2's shape — LayerNorm
// pre-LN (GPT-2, a final ln_f) or post-LN (the paper), GELU or ReLU, learned or sinusoidal
// positions, biases, the output head tied to wte — with Hugging Face GPT-2's names
// (h.0.attn.c_attn.weight stored (in, out), ...). Its config is the Transformer body's.
#pragma once
#include <memory>

#include "models/decoder/causal_decoder.h"
#include "models/gpt/gpt_config.h"

namespace potop {

class GPT final : public CausalDecoder {
 public:
  explicit GPT(const GPTConfig& config);  // parameters zero: init_weights, or load them
  static MemoryPlan plan(const GPTConfig& config, const BatchShape& shape);
  static Layout parameter_layout(const GPTConfig& config);

  const GPTConfig& config() const { return config_; }
  std::unique_ptr<Model> replica() const override;

 private:
  GPT(const GPT& from, const ParameterSet& shared) : CausalDecoder(from.layers_, shared), config_(from.config_) {}
  GPTConfig config_;
};

}  // namespace potop
