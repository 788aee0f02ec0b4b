// libFuzzer target: the checkpoint loader. Any bytes given as a .safetensors file must either
// load or be refused with a potop::Error: never a crash, a hang, an out-of-bounds read or an
// exception of another type. Covers the container (header JSON, offsets, checksum), the
// training-state metadata, resume option merging, and loading tensors into a model whose
// config comes from the file (when it is small enough to build).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/model_dir.h"
#include "checkpoint/train_state.h"
#include "checkpoint/weights.h"
#include "core/error.h"
#include "core/safetensors.h"
#include "models/gpt/gpt.h"
#include "models/gpt/gpt_options.h"
#include "train/resume.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace potop;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const SafetensorsFile file = SafetensorsFile::from_bytes(std::move(bytes), "fuzz.safetensors");
    for (const std::string& name : file.names()) (void)file.bytes(name);
    GPTConfig config;
    if (auto text = file.metadata_value("potop.config")) {
      const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded()) return 0;
      update_from_json(config, j, "fuzz: potop.config");
      config.validate("fuzz");
    } else {
      return 0;
    }
    if (GPT::parameter_layout(config).total_floats() > (1u << 20)) return 0;
    GPT model(config);
    try {
      load_weights(file, model.parameters());
    } catch (const Error&) {
    }
    try {
      (void)read_tokenizer(file);
    } catch (const Error&) {
    }
    const TrainState state = read_train_state(file);
    std::vector<std::string> notes;
    RunControl control;
    control.given = {"steps", "lr"};
    (void)resume_options(state, GptOptions{}, control, "fuzz-dir", notes);
    const Layout& layout = model.parameters().layout();
    Arena m(layout), v(layout);
    load_train_state_tensors(file, model.parameters(), {{"adamw.m.", &m}, {"adamw.v.", &v}});
  } catch (const Error&) {
    // Refusing bad input with a message is the expected outcome.
  }
  return 0;
}
