// A decoder kind's class: the causal decoder built from the kind's own config (what its
// config.json and flags hold), mapped onto the body's switches by `shape_of`, and kept for
// config(). A kind is a row, a config and its mapping, not a class of its own:
//   using Llama = DecoderOf<LlamaConfig, llama_body>;
#pragma once
#include <memory>

#include "models/decoder/causal_decoder.h"

namespace potop {

template <class Config, BodyConfig (*shape_of)(const Config&)>
class DecoderOf final : public CausalDecoder {
 public:
  explicit DecoderOf(const Config& config) : CausalDecoder(shape_of(config)), config_(config) {}
  static MemoryPlan plan(const Config& config, const BatchShape& batch) {
    return CausalDecoder::plan(shape_of(config), batch);
  }
  static Layout parameter_layout(const Config& config) { return CausalDecoder::parameter_layout(shape_of(config)); }

  const Config& config() const { return config_; }
  std::unique_ptr<Model> replica() const override { return std::unique_ptr<Model>(new DecoderOf(*this, params_)); }

 private:
  DecoderOf(const DecoderOf& from, const ParameterSet& shared) : CausalDecoder(from.layers_, shared), config_(from.config_) {}
  Config config_;
};

}  // namespace potop
