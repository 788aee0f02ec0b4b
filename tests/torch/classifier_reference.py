"""PyTorch reference for the classifier parity test (tests/unit/model/test_classifier.cpp).

    /usr/bin/python3 tests/torch/classifier_reference.py DIR

DIR holds (written by the C++ test):
  weights.safetensors  the classifier's parameters: the body's GPT-2 names, classifier.weight (K, C)
                       and classifier.bias (K)
  batch.safetensors    "tokens" I32 (B, T) padded, "lengths" I32 (B), "labels" I32 (B)
  config.json          {"model": {...potop ClassifierConfig: the body's fields, causal, pooling, pooler...}}
and receives reference.safetensors: "logits" (B, K), "loss" (), "grad.<param>" for every
parameter after one forward and backward. The body is scripts/torch_gpt.py's GPT with its
attention mask replaced: causal, or bidirectional with the padding keys masked (BERT). Pooling:
cls (position 0), last (position len - 1), mean (over the real positions); then BERT's pooler,
tanh(p @ pooler.weight + pooler.bias), when the config has one. No dropout.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import torch_gpt  # noqa: E402


def masked_attention(attn, x, keep):
    """attn's forward with `keep` (B, 1, T, T) bool: which keys each query sees."""
    B, T, C = x.shape
    H, D = attn.n_head, C // attn.n_head
    q, k, v = attn.c_attn(x).split(C, dim=2)
    q, k, v = (t.view(B, T, H, D).transpose(1, 2) for t in (q, k, v))
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
    att = F.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)
    return attn.c_proj((att @ v).transpose(1, 2).reshape(B, T, C))


def main(argv):
    d = argv[1]
    torch.set_num_threads(1)
    with open(os.path.join(d, "config.json")) as f:
        config = json.load(f)["model"]
    weights, _ = torch_gpt.load_safetensors(os.path.join(d, "weights.safetensors"))
    batch, _ = torch_gpt.load_safetensors(os.path.join(d, "batch.safetensors"))
    tokens = torch.from_numpy(batch["tokens"].astype("int64"))
    lengths = torch.from_numpy(batch["lengths"].astype("int64"))
    labels = torch.from_numpy(batch["labels"].astype("int64"))
    B, T = tokens.shape

    body = torch_gpt.GPT(config)  # model_config keeps the body's fields
    body.load_numpy({k: v for k, v in weights.items() if not k.startswith(("classifier.", "pooler."))})
    pooler = config.get("pooler", False)
    if pooler:  # BERT's pooler: tanh(p @ W_p + b_p), W_p stored (in, out)
        pool_w = torch.nn.Parameter(torch.from_numpy(weights["pooler.weight"].copy()))
        pool_b = torch.nn.Parameter(torch.from_numpy(weights["pooler.bias"].copy()))
    head_w = torch.nn.Parameter(torch.from_numpy(weights["classifier.weight"].copy()))
    head_b = torch.nn.Parameter(torch.from_numpy(weights["classifier.bias"].copy()))

    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    if config["causal"]:
        keep = torch.ones(T, T, dtype=torch.bool).tril()[None, None]
    else:
        keep = real[:, None, None, :].expand(B, 1, T, T)
    for block in body.h:
        block.attn.forward = (lambda a: (lambda x: masked_attention(a, x, keep)))(block.attn)
    pos = body.wpe.weight[:T] if body.wpe is not None else body.sinusoid[:T]
    x = body.wte(tokens) + pos
    for block in body.h:
        x = block(x)
    if body.ln_f is not None:
        x = body.ln_f(x)
    if config["pooling"] == "cls":
        pooled = x[:, 0]
    elif config["pooling"] == "last":
        pooled = x[torch.arange(B), lengths - 1]
    else:
        pooled = (x * real[:, :, None]).sum(1) / lengths[:, None]
    if pooler:
        pooled = torch.tanh(pooled @ pool_w + pool_b)
    logits = pooled @ head_w.t() + head_b
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    out = {"logits": logits.detach(), "loss": loss.detach()}
    for name, p in body.named_parameters():
        out["grad." + name] = p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p)
    out["grad.classifier.weight"] = head_w.grad.detach()
    out["grad.classifier.bias"] = head_b.grad.detach()
    if pooler:
        out["grad.pooler.weight"], out["grad.pooler.bias"] = pool_w.grad.detach(), pool_b.grad.detach()
    torch_gpt.save_safetensors(os.path.join(d, "reference.safetensors"), out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
