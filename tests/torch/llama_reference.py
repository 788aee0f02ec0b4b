"""PyTorch reference for tests/unit/model/test_llama_parity.cpp.

    /usr/bin/python3 tests/torch/llama_reference.py DIR

DIR holds (written by the C++ test):
  weights.safetensors  potop's initialised Llama parameters
  batch.safetensors    "tokens", "targets": I32 (B, T); negative targets are ignored
  config.json          {"model": {...potop LlamaConfig...},
                        "training": {"lr", "beta1", "beta2", "weight_decay", "grad_clip", "steps"}}
and receives reference.safetensors:
  "logits" (B, T, V), "loss" (), "grad.<param>" for every parameter (one forward + backward),
  "losses" and "grad_norms" (steps): each step's loss and gradient norm while training `steps`
  AdamW steps on the same batch at a constant lr (zero_grad, forward, backward, clip, step —
  potop's trainer order), and "final.<param>": the parameters after those steps.
Everything in float32 (scripts/torch_llama.py). Exits non-zero on any error.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import torch_gpt  # noqa: E402
import torch_llama  # noqa: E402


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} DIR", file=sys.stderr)
        return 2
    d = argv[1]
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float32)
    with open(os.path.join(d, "config.json")) as f:
        config = json.load(f)
    train = config["training"]
    weights, _ = torch_gpt.load_safetensors(os.path.join(d, "weights.safetensors"))
    batch, _ = torch_gpt.load_safetensors(os.path.join(d, "batch.safetensors"))
    tokens = torch.from_numpy(batch["tokens"].astype("int64"))
    targets = torch.from_numpy(batch["targets"].astype("int64"))

    model = torch_llama.Llama(config["model"])
    model.load_numpy(weights)
    model.train()  # as potop's trainer: training=true (dropout is 0 in these tests)

    out = {}
    logits, loss = model(tokens, targets)
    loss.backward()
    out["logits"] = logits.detach()
    out["loss"] = loss.detach()
    for name, p in model.named_parameters():
        out["grad." + name] = p.grad.detach().clone()

    optimizer = torch_gpt.make_adamw(model, lr=train["lr"], betas=(train["beta1"], train["beta2"]),
                                     weight_decay=train["weight_decay"])
    losses, norms = [], []
    for _ in range(train["steps"]):
        optimizer.zero_grad(set_to_none=True)
        _, loss = model(tokens, targets)
        loss.backward()
        norms.append(torch_gpt.clip_grad_norm(model, train["grad_clip"]))
        optimizer.step()
        losses.append(loss.item())
    out["losses"] = torch.tensor(losses, dtype=torch.float32)
    out["grad_norms"] = torch.tensor(norms, dtype=torch.float32)
    for name, p in model.named_parameters():
        out["final." + name] = p.detach()
    torch_gpt.save_safetensors(os.path.join(d, "reference.safetensors"), out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
