"""PyTorch's side of the benchmark (bench/run.py drives it; see docs/performance.md).

The model is the reference GPT of scripts/torch_gpt.py (potop's architecture, parameter names
and shapes), trained the way potop's trainer trains: zero_grad, forward, backward, clip the
gradient norm to 1, AdamW. Generation runs under torch.inference_mode(), with the KV cache
written below (torch_gpt.GPT has none) or without one. One measurement per process, printed as
one JSON object, so its peak RSS is its own:

    /usr/bin/python3 bench/torch_bench.py train --n-layer 4 --n-head 4 --n-embd 128 --block 64 --batch 12 --threads 2
    /usr/bin/python3 bench/torch_bench.py generate --n-layer 6 --n-head 6 --n-embd 384 --block 512 [--no-kv-cache]
    /usr/bin/python3 bench/torch_bench.py train-llama --n-layer 6 --n-head 6 --n-kv-head 2 --n-embd 384 --block 256 --batch 8

train-llama trains scripts/torch_llama.py's Llama (potop's `train --arch llama`: RMSNorm, RoPE,
grouped-query attention, SwiGLU, no biases, tied embeddings) the same way (bench/llama.py drives it).

Settings that help PyTorch are flags (run.py tries them and keeps the fastest): --foreach (the
multi-tensor AdamW and clipping), and OPENBLAS_CORETYPE in the environment (Debian's OpenBLAS
may misdetect the CPU). Threads: torch.set_num_threads(n), one inter-op thread.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import torch_gpt  # noqa: E402


def load_tokens(path: str | None, vocab: int) -> np.ndarray:
    if path:
        return np.fromfile(path, dtype=np.int32)
    return np.random.default_rng(7).integers(0, vocab, size=1 << 20, dtype=np.int32)


def make_model(args, vocab: int) -> torch_gpt.GPT:
    model = torch_gpt.GPT({"vocab_size": vocab, "block_size": args.block, "n_layer": args.n_layer,
                           "n_head": args.n_head, "n_embd": args.n_embd})
    model.init_weights(1337)
    return model


def make_llama(args, vocab: int):
    import torch_llama  # scripts/torch_llama.py
    model = torch_llama.Llama({"vocab_size": vocab, "block_size": args.block, "n_layer": args.n_layer,
                               "n_head": args.n_head, "n_kv_head": args.n_kv_head, "n_embd": args.n_embd,
                               "ffn_hidden": args.ffn_hidden})
    model.init_weights(1337)
    return model


def flops_per_token(model) -> float:
    """As potop_bench: 6 N (N without the GPT's position table; the Llama has none) + 12 L T C."""
    c = model.config
    n = sum(p.numel() for p in model.parameters())
    if isinstance(model, torch_gpt.GPT):
        n -= c["block_size"] * c["n_embd"]
    return 6.0 * n + 12.0 * c["n_layer"] * c["block_size"] * c["n_embd"]


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def common(args, model) -> dict:
    return {"impl": "pytorch", "torch": torch.__version__, "threads": torch.get_num_threads(),
            "foreach": args.foreach, "coretype": os.environ.get("OPENBLAS_CORETYPE", ""),
            "params": sum(p.numel() for p in model.parameters())}


def train(args) -> dict:
    tokens = load_tokens(args.tokens, args.vocab)
    vocab = int(tokens.max()) + 1 if args.tokens else args.vocab
    model = make_llama(args, vocab) if args.mode == "train-llama" else make_model(args, vocab)
    model.train()
    params = list(model.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.99), eps=1e-8, foreach=args.foreach)
    B, T = args.batch, args.block
    rng = np.random.default_rng(42)
    tok = torch.from_numpy(tokens.astype(np.int64))
    times, loss = [], float("nan")
    for step in range(args.warmup + args.steps):
        starts = torch.from_numpy(rng.integers(0, len(tokens) - T - 1, size=B))
        idx = starts[:, None] + torch.arange(T)[None, :]
        x, y = tok[idx], tok[idx + 1]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        _, l = model(x, y)
        l.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        loss = float(l)
        if step >= args.warmup:
            times.append(dt)
    times.sort()
    median = times[len(times) // 2]
    return {**common(args, model), "ms_per_step": median * 1e3, "min_ms_per_step": times[0] * 1e3,
            "tokens_per_s": B * T / median, "flops_per_token": flops_per_token(model), "loss": loss,
            "peak_rss_mib": peak_rss_mib()}


class KVCacheGPT:
    """Batch-1 incremental decoding over torch_gpt.GPT's parameters (pre-LN, GELU, learned
    positions: the benchmark's model). Keys and values live in preallocated
    (n_layer, H, block, D) tensors; each call runs only the new positions."""

    def __init__(self, model: torch_gpt.GPT):
        c = model.config
        self.m, self.H, self.C = model, c["n_head"], c["n_embd"]
        self.D = self.C // self.H
        L, T = c["n_layer"], c["block_size"]
        self.k = torch.zeros(L, self.H, T, self.D)
        self.v = torch.zeros(L, self.H, T, self.D)
        self.length = 0

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (n,) continuing the cached ones -> logits of the last position (V,)."""
        m, H, D, C = self.m, self.H, self.D, self.C
        n, p0 = tokens.shape[0], self.length
        x = m.wte.weight[tokens] + m.wpe.weight[p0:p0 + n]  # (n, C)
        scale = 1.0 / math.sqrt(D)
        for l, blk in enumerate(m.h):
            h = F.layer_norm(x, (C,), blk.ln_1.weight, blk.ln_1.bias, torch_gpt.LAYERNORM_EPS)
            qkv = torch.addmm(blk.attn.c_attn.bias, h, blk.attn.c_attn.weight)  # (n, 3C)
            q, k, v = (t.view(n, H, D).transpose(0, 1) for t in qkv.split(C, dim=1))  # (H, n, D)
            self.k[l, :, p0:p0 + n] = k
            self.v[l, :, p0:p0 + n] = v
            keys, values = self.k[l, :, :p0 + n], self.v[l, :, :p0 + n]
            scores = torch.bmm(q, keys.transpose(1, 2)) * scale  # (H, n, p0 + n)
            if n > 1:
                mask = torch.ones(n, p0 + n, dtype=torch.bool).tril(diagonal=p0)
                scores = scores.masked_fill(~mask, float("-inf"))
            y = torch.bmm(torch.softmax(scores, dim=-1), values).transpose(0, 1).reshape(n, C)
            x = x + torch.addmm(blk.attn.c_proj.bias, y, blk.attn.c_proj.weight)
            h = F.layer_norm(x, (C,), blk.ln_2.weight, blk.ln_2.bias, torch_gpt.LAYERNORM_EPS)
            h = F.gelu(torch.addmm(blk.mlp.c_fc.bias, h, blk.mlp.c_fc.weight), approximate="tanh")
            x = x + torch.addmm(blk.mlp.c_proj.bias, h, blk.mlp.c_proj.weight)
        x = F.layer_norm(x[-1:], (C,), m.ln_f.weight, m.ln_f.bias, torch_gpt.LAYERNORM_EPS)
        self.length += n
        return (x @ m.wte.weight.t())[0]


def generate(args) -> dict:
    tokens = load_tokens(args.tokens, args.vocab)
    vocab = int(tokens.max()) + 1 if args.tokens else args.vocab
    model = make_model(args, vocab)
    model.eval()
    n = min(args.new_tokens, args.block - 1)
    gen = torch.Generator().manual_seed(99)
    prompt = torch.from_numpy(tokens[:1].astype(np.int64))

    def run(count: int) -> None:
        if args.kv_cache:
            cache = KVCacheGPT(model)
            logits = cache.forward(prompt)
            for _ in range(count - 1):
                nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=gen)
                logits = cache.forward(nxt)
            torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=gen)
        else:
            context = prompt[None, :]
            for _ in range(count):
                logits, _ = model(context)
                nxt = torch.multinomial(torch.softmax(logits[0, -1], dim=-1), 1, generator=gen)
                context = torch.cat([context, nxt[None, :]], dim=1)

    with torch.inference_mode():
        run(8)  # warm-up
        t0 = time.perf_counter()
        run(n)
        dt = time.perf_counter() - t0
    return {**common(args, model), "kv_cache": args.kv_cache, "new_tokens": n, "seconds": dt,
            "tokens_per_s": n / dt, "peak_rss_mib": peak_rss_mib()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["train", "train-llama", "generate"])
    ap.add_argument("--n-layer", type=int, default=4)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-embd", type=int, default=128)
    ap.add_argument("--n-kv-head", type=int, default=0, help="train-llama: key/value heads (0 = --n-head)")
    ap.add_argument("--ffn-hidden", type=int, default=0, help="train-llama: SwiGLU hidden size (0 = 8/3 C rounded to 32)")
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--batch", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=96)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--new-tokens", type=int, default=500)
    ap.add_argument("--no-kv-cache", dest="kv_cache", action="store_false")
    ap.add_argument("--foreach", action="store_true")
    ap.add_argument("--tokens", help="int32 token file (default: random ids)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(0)
    result = generate(args) if args.mode == "generate" else train(args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
