"""PyTorch reference for tests/unit/model/test_bert_parity.cpp.

    /usr/bin/python3 tests/torch/bert_reference.py DIR

DIR holds (written by the C++ test):
  weights.safetensors  potop's initialised parameters
  batch.safetensors    "tokens", "targets": I32 (B, T), "lengths": I32 (B) — one masked batch
                       (targets -1 where nothing is predicted, <pad> past a row's length);
                       "step_tokens", "step_targets": I32 (steps, B, T) — the batch of each
                       training step (the same rows, a new mask each step), with the same lengths
  config.json          {"model": {...potop BertConfig...},
                        "training": {"lr", "beta1", "beta2", "weight_decay", "grad_clip", "steps"}}
and receives reference.safetensors:
  "hidden" (B, T, C), "logits" (M, V) of the masked positions, "loss" (), "attn.<l>" (B, H, T, T)
  and "grad.<param>" for every parameter (one forward + backward of the batch); "losses" and
  "grad_norms" (steps) of `steps` AdamW steps on the step batches at a constant lr (zero_grad,
  forward, backward, clip, step: potop's trainer order), and "final.<param>" after them.
Everything in float32. Exits non-zero on any error.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import torch_bert  # noqa: E402
import torch_gpt  # noqa: E402


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
    t = {k: torch.from_numpy(v.astype("int64")) for k, v in batch.items()}

    model = torch_bert.Bert(config["model"])
    model.load_numpy(weights)
    model.train()  # as potop's trainer: training=true (dropout is 0 in these tests)

    hidden, logits, loss = model(t["tokens"], t["lengths"], t["targets"])
    loss.backward()
    out = {"hidden": hidden.detach(), "logits": logits.detach(), "loss": loss.detach()}
    for l in range(len(model.h)):
        out[f"attn.{l}"] = model.attention(l)
    for name, p in model.named_parameters():
        out["grad." + name] = p.grad.detach().clone()

    optimizer = torch_gpt.make_adamw(model, lr=train["lr"], betas=(train["beta1"], train["beta2"]),
                                     weight_decay=train["weight_decay"])
    losses, norms = [], []
    for step in range(train["steps"]):
        optimizer.zero_grad(set_to_none=True)
        _, _, loss = model(t["step_tokens"][step], t["lengths"], t["step_targets"][step])
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
