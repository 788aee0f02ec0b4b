// `potop quantize`: a trained model with its matrices in fewer bits (kernels/quant.h), for
// generation and serving. The matrices of attention and the feed-forward blocks
// (TensorSpec::matrix) are quantized; the embeddings, LayerNorms and biases stay float32, as
// llama.cpp keeps its norms and biases (its token embeddings it quantizes too; potop's tied LM
// head reads them every token, so they keep full precision here). Every kind of model that has
// such matrices quantizes the same way: the layers, not the model, say which tensors they are.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/model_dir.h"
#include "kernels/quant.h"
#include "nn/parameters.h"

namespace potop {

namespace fs = std::filesystem;

struct QuantizeReport {
  int matrices = 0;               // quantized
  std::vector<std::string> kept;  // "h.0.mlp.c_proj.weight: 100 inputs, not whole blocks of 32" (stay float32)
  size_t bytes_before = 0;        // of all the parameters, as float32
  size_t bytes_after = 0;         // as stored now
};

// Quantizes every matrix of params whose rows (its inputs) fill whole blocks to `type`; the
// others stay float32, listed with why. The set must hold no quantized matrix yet.
QuantizeReport quantize_matrices(ParameterSet& params, QuantType type);

// The default output of quantizing `model` (a directory or a lone weights file): "DIR-q8_0" or
// "NAME-q8_0.safetensors" beside it.
fs::path default_quantized_path(const fs::path& model, QuantType type);

// Writes a quantized model: for a directory, `out` is a new directory holding the source's files
// but its checkpoints (config.json gains "quantized": "<type>") and latest.safetensors with the
// model's weights as they are now; for a lone weights file, `out` is a weights file. The step and
// losses of the checkpoint travel with it. Nothing is left behind on failure: a directory is
// written beside `out` and renamed into place. `out` must not exist.
void write_quantized_model(const LoadedModel& model, const fs::path& source, const fs::path& out, QuantType type);

}  // namespace potop
