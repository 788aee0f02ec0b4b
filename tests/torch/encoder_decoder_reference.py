"""PyTorch reference for tests/unit/model/test_encoder_decoder_parity.cpp.

    /usr/bin/python3 tests/torch/encoder_decoder_reference.py DIR

DIR holds (written by the C++ test):
  weights.safetensors  potop's parameters
  batch.safetensors    "source" I32 (B, S), "source_lengths" I32 (B), "tokens", "targets" I32 (B, T)
  config.json          {"model": {...potop EncoderDecoderConfig...}}
and receives reference.safetensors: "logits" (B, T, V), "loss" (), "grad.<param>" for every
parameter, and "cross.<l>" (B, H, T, S): decoder block l's cross-attention probabilities.
Everything in float32 (dropout is 0 in these tests). Exits non-zero on any error.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import torch_gpt  # noqa: E402
import torch_encoder_decoder  # noqa: E402


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} DIR", file=sys.stderr)
        return 2
    d = argv[1]
    torch.set_num_threads(1)
    with open(os.path.join(d, "config.json")) as f:
        config = json.load(f)
    weights, _ = torch_gpt.load_safetensors(os.path.join(d, "weights.safetensors"))
    batch, _ = torch_gpt.load_safetensors(os.path.join(d, "batch.safetensors"))
    t = {k: torch.from_numpy(v.astype("int64")) for k, v in batch.items()}
    model = torch_encoder_decoder.EncoderDecoder(config["model"])
    model.load_numpy(weights)
    model.train()
    logits, loss = model(t["source"], t["source_lengths"], t["tokens"], t["targets"])
    loss.backward()
    out = {"logits": logits.detach(), "loss": loss.detach()}
    for name, p in model.named_parameters():
        out["grad." + name] = p.grad.detach().clone()
    for l, block in enumerate(model.decoder.h):
        out[f"cross.{l}"] = block.crossattention.last_att
    torch_gpt.save_safetensors(os.path.join(d, "reference.safetensors"), out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
