"""PyTorch reference for tests/unit/model/test_layers.cpp: a residual stack of sub-layers
(src/nn/residual_stack.h) — self-attention (causal or not, with a padding mask), cross-attention
over a second sequence with its own padding mask, and the MLP — with pre-LN or post-LN Add & Norm.

    /usr/bin/python3 tests/torch/layer_reference.py INPUTS.safetensors OUTPUT.safetensors [INPUTS OUTPUT]...

Each INPUTS holds "x" (B, T, C), "memory" (B, S, C), "lengths" and "memory_lengths" (B) as I32, "dout"
(B, T, C), every parameter under potop's name, and in the metadata entry "potop.stack" a JSON
object:
    {"norm": "pre"|"post", "n_head": H, "activation": "gelu"|"relu", "final_norm": name or null,
     "sublayers": [{"kind": "attention"|"mlp", "prefix": ..., "norm": ..., "causal": bool,
                    "cross": bool, "padding": bool}, ...]}
OUTPUT receives "out" (B, T, C), and by autograd from dout: "dx", "dmemory" and "grad.<param>".
Semantics, as potop (and the paper):
    post-LN:  x <- LN_k(x + f_k(x));            pre-LN:  x <- x + f_k(LN_k(x)), out = LN_f(x)
    attention(q_in, kv_in) = c_proj(concat_h softmax(Q_h K_hᵀ / √D + mask) V_h), with
      self:  [Q K V] = q_in @ c_attn          cross: Q = q_in @ q_attn, [K V] = memory @ c_attn
      mask:  -inf for keys j > i (causal) and for keys j >= the key sequence's length (padding)
    mlp(x) = c_proj(f(c_fc(x))), f = GELU (tanh form) or ReLU
Everything in float32. Exits non-zero on any error.
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import torch_gpt  # noqa: E402


def layer_norm(x, p, name):
    return F.layer_norm(x, p[name + ".weight"].shape, p[name + ".weight"], p.get(name + ".bias"),
                        torch_gpt.LAYERNORM_EPS)


def linear(x, p, name):
    out = x @ p[name + ".weight"]
    b = p.get(name + ".bias")
    return out + b if b is not None else out


def attention(x, memory, p, s, H, lengths, memory_lengths):
    B, T, C = x.shape
    D = C // H
    if s["cross"]:
        q = linear(x, p, s["prefix"] + ".q_attn")
        k, v = linear(memory, p, s["prefix"] + ".c_attn").split(C, dim=2)
        key_lengths = memory_lengths
    else:
        q, k, v = linear(x, p, s["prefix"] + ".c_attn").split(C, dim=2)
        key_lengths = lengths
    Tk = k.shape[1]
    q, k, v = (t.reshape(B, -1, H, D).transpose(1, 2) for t in (q, k, v))  # (B, H, ·, D)
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
    mask = torch.zeros(B, 1, T, Tk, dtype=torch.bool)
    if s["causal"]:
        mask |= ~torch.ones(T, Tk, dtype=torch.bool).tril(Tk - T)
    if s["padding"]:
        mask |= (torch.arange(Tk)[None, :] >= key_lengths[:, None])[:, None, None, :]
    att = F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    y = (att @ v).transpose(1, 2).reshape(B, T, C)
    return linear(y, p, s["prefix"] + ".c_proj")


def mlp(x, p, s, activation):
    h = linear(x, p, s["prefix"] + ".c_fc")
    h = F.gelu(h, approximate="tanh") if activation == "gelu" else F.relu(h)
    return linear(h, p, s["prefix"] + ".c_proj")


def run(inputs, output):
    tensors, meta = torch_gpt.load_safetensors(inputs)
    spec = json.loads(meta["potop.stack"])
    t = {k: torch.from_numpy(np.array(v)) for k, v in tensors.items()}
    x = t.pop("x").float().requires_grad_(True)
    memory = t.pop("memory").float().requires_grad_(True)
    lengths = t.pop("lengths").long()
    memory_lengths = t.pop("memory_lengths").long()
    dout = t.pop("dout").float()
    p = {k: v.float().requires_grad_(True) for k, v in t.items()}

    h = x
    for s in spec["sublayers"]:
        inner = layer_norm(h, p, s["norm"]) if spec["norm"] == "pre" else h
        if s["kind"] == "attention":
            o = attention(inner, memory, p, s, spec["n_head"], lengths, memory_lengths)
        else:
            o = mlp(inner, p, s, spec["activation"])
        h = h + o if spec["norm"] == "pre" else layer_norm(h + o, p, s["norm"])
    out = layer_norm(h, p, spec["final_norm"]) if spec["final_norm"] else h
    out.backward(dout)

    dmemory = memory.grad if memory.grad is not None else torch.zeros_like(memory)  # no cross-attention
    result = {"out": out.detach(), "dx": x.grad, "dmemory": dmemory}
    for name, v in p.items():
        result["grad." + name] = v.grad if v.grad is not None else torch.zeros_like(v)
    torch_gpt.save_safetensors(output, result)


def main(argv):
    if len(argv) < 3 or len(argv) % 2 != 1:
        print(f"usage: {argv[0]} INPUTS OUTPUT [INPUTS OUTPUT]...", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    for i in range(1, len(argv), 2):
        run(argv[i], argv[i + 1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
