"""PyTorch reference for the bag-of-words LM's kernels and model (tests/unit/kernels/test_bow_kernels.cpp,
tests/unit/model/test_bow_model.cpp).

    /usr/bin/python3 tests/torch/bow_reference.py INPUTS.safetensors OUTPUT.safetensors

INPUTS holds each case's tensors as "<case>.<name>" and, in the metadata entry "potop.bow", a JSON
object {"<case>": {"kernel": "additive_score" | "dot_score" | "bag_average" | "model", ...}}. This
script recomputes each case with plain torch ops (the model as the formula of src/models/bow/bow.h) and
its gradients by autograd, and writes them to OUTPUT under the names the C++ tests use. float32.
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


def leaf(a):
    return torch.tensor(np.array(a), dtype=torch.float32, requires_grad=True)


def const(a, dtype=torch.float32):
    return torch.tensor(np.array(a), dtype=dtype)


def earlier(T):
    """mask[t, k] = k < t: the earlier words position t may look at."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)


def masked(scores):
    return scores.masked_fill(~earlier(scores.shape[-1]), float("-inf"))


def bag(scores, x):
    """weights = softmax over k < t (0 elsewhere; row 0 all 0); out = weights @ x."""
    mask = earlier(scores.shape[-1])
    filled = scores.masked_fill(~mask, float("-inf"))
    filled = torch.where(mask.any(-1, keepdim=True), filled, torch.zeros_like(filled))  # row 0: no NaN
    weights = torch.softmax(filled, dim=-1) * mask
    return weights @ x, weights


def additive(keys, queries, v):
    """scores[b, t, k] = v · tanh(keys[b, k] + queries[b, t])."""
    return torch.tanh(keys[:, None, :, :] + queries[:, :, None, :]) @ v


def grads(out, dout, wrt):
    out.backward(const(dout))
    return {name: t.grad if t.grad is not None else torch.zeros_like(t) for name, t in wrt.items()}


def additive_score(t, p):
    keys, queries, v = leaf(t["keys"]), leaf(t["queries"]), leaf(t["v"])
    scores = additive(keys, queries, v)
    dscores = np.where(earlier(scores.shape[-1]).numpy(), t["dscores"], 0).astype(np.float32)
    out = {"scores": masked(scores.detach())}
    out.update(grads(scores, dscores, {"dkeys": keys, "dqueries": queries, "dv": v}))
    return out


def dot_score(t, p):
    x = leaf(t["x"])
    scores = p["scale"] * (x @ x.transpose(1, 2))
    dscores = np.where(earlier(scores.shape[-1]).numpy(), t["dscores"], 0).astype(np.float32)
    out = {"scores": masked(scores.detach())}
    out.update(grads(scores, dscores, {"dx": x}))
    return out


def bag_average(t, p):
    scores, x = leaf(t["scores"]), leaf(t["x"])
    out, weights = bag(scores, x)
    result = {"out": out, "weights": weights}
    result.update(grads(out, t["dout"], {"dx": x, "dscores": scores}))
    return result


def model(t, p):
    """loss = mean cross-entropy of softmax(C·[x; A] + c), and every gradient, as src/models/bow/bow.h."""
    tokens, targets = const(t["tokens"], torch.long), const(t["targets"], torch.long)
    # The idf table is a constant of the model, never trained: no gradient is compared for it.
    params = {name: const(a) if name == "bag.log_idf" else leaf(a)
              for name, a in t.items() if name not in ("tokens", "targets")}
    kind, d = p["attention"], params["wte"].shape[1]
    x = F.embedding(tokens, params["wte"])
    B, T = tokens.shape
    weights = torch.zeros(B, T, T)
    if kind == "none":
        features = x
    else:
        if kind == "mean":
            scores = torch.zeros(B, T, T)
        elif kind == "idf":
            scores = params["bag.log_idf"][tokens][:, None, :].expand(B, T, T)
        elif kind == "dot":
            scores = (x @ x.transpose(1, 2)) / math.sqrt(d)
        else:
            keys = x @ params["score.w_key"]
            queries = x @ params["score.w_query"] + params["score.bias"]
            scores = additive(keys, queries, params["score.v"])
        A, weights = bag(scores, x)
        features = torch.cat([x, A], dim=-1)
    logits = features @ params["head.weight"].t() + params["head.bias"]
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1)
    loss.backward()
    out = {"loss": loss.reshape(1), "weights": weights.detach()}
    for name, tensor in params.items():
        if not tensor.requires_grad:
            continue
        out["d." + name] = tensor.grad if tensor.grad is not None else torch.zeros_like(tensor)
    return out


KERNELS = {"additive_score": additive_score, "dot_score": dot_score, "bag_average": bag_average, "model": model}


def main(argv):
    if len(argv) != 3:
        print(f"usage: {argv[0]} INPUTS.safetensors OUTPUT.safetensors", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    tensors, meta = torch_gpt.load_safetensors(argv[1])
    cases = json.loads(meta["potop.bow"])
    out = {}
    for case, params in cases.items():
        prefix = case + "."
        inputs = {name[len(prefix):]: a for name, a in tensors.items() if name.startswith(prefix)}
        for name, value in KERNELS[params["kernel"]](inputs, params).items():
            out[prefix + name] = value.detach().to(torch.float32)
    torch_gpt.save_safetensors(argv[2], out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
