"""GPT-2 124M on this CPU (12 layers, 12 heads, 768 wide, vocabulary 50257): potop vs PyTorch.

    bash bench/run.sh gpt2 [--quick]
    /usr/bin/python3 bench/gpt2.py --bench build/release/bench/potop_bench --potop build/release/src/potop
        [--quick] [--parts train,sweep,generate] [--threads 1,2] [--batch 4] [--rounds 2]
        [--contexts 128,256,512,1024,2048] [--sweep-tokens 4096] [--prompt-tokens 512] [--new-tokens 128]
        [--kv-cache f16] [--repeats 3]

Three measurements in one run, each printed as a table; all raw results go to --json:

  1. train: training steps of GPT-2 124M at context 1024 (random token ids, random init, batch
     --batch), potop (potop_bench train: the trainer's own train_step, zero_grad, forward, backward,
     clip to norm 1, AdamW) against PyTorch (bench/torch_bench.py train: scripts/torch_gpt.py, the
     same architecture, names and initialisation, with PyTorch 1.13's eager attention, which keeps
     the (B, H, T, T) matrices), at each thread count, alternating in each round. PyTorch gets its
     best set-up as bench/run.py gives it (OpenBLAS core type, AdamW for-loop or foreach), from a
     one-step trial of each on a batch of 2 × 256. Tokens/s is the median step's; the ratio is the
     median of the rounds' paired ratios. MFU: model FLOPs per token, 6·N + 12·L·T·C (N: every
     parameter but the position table), times tokens/s, over the FMA peak measured in this run
     (potop_bench peak). Peak RSS is each process's own.
  2. sweep: the context length T from 128 to 2048 at a fixed number of tokens per step (batch =
     --sweep-tokens / T), 2 threads, potop and PyTorch: tokens/s and peak RSS at each T, the ratio
     of tokens/s at the longest T to the shortest, and an SVG of both curves (--svg).

  3. generate: GPT-2 124M's shape with a BPE vocabulary of 50257 tokens (potop tokenizer train on
     ../shared's potop.txt and tatoeba-eng-pol.tsv), trained for one step, exported to GGUF at f32,
     q8_0 and q4_0 (potop export) and quantized the same way for potop (potop quantize). For each
     type and thread count bench/gguf_llama.mjs runs llama.cpp (node-llama-cpp, pinned in
     tests/gguf) and potop sample on the same prompt of --prompt-tokens tokens, greedy, then
     --new-tokens more, both keeping the KV cache in --kv-cache (f16: llama.cpp's default; potop
     sample --kv-cache f16): the prompt's reading (its tokens over the time to the first new token,
     as llama.cpp's "prompt eval") and decoding (tokens/s after the first), the best of 3 runs in
     one process each, and of --repeats such processes of each engine, alternating (on this VM a
     process's speed varies by up to a third from one start to the next, a run's by a few %).
     Decoding is also shown against the memory-bandwidth bound: the bytes a token reads at least
     (the weights file's tensors but the position table, of which one row, and the KV cache at the
     mean context) at the best read bandwidth measured before each of those processes
     (potop_bench bandwidth).

Before each measurement it waits (bounded by --quiet-timeout) for the other processes to use at
most --max-busy of the CPUs, and prints how busy the machine was.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run as runbench  # noqa: E402  (bench/run.py: peak, the quiet wait, PyTorch set-ups, run_json)
from machine import cpu_name  # noqa: E402
from quant import safetensors_tensors  # noqa: E402

GPT2 = {"n_layer": 12, "n_head": 12, "n_embd": 768, "vocab": 50257}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def flags(block: int, batch: int, threads: int, steps: int, warmup: int) -> list[str]:
    return ["--n-layer", str(GPT2["n_layer"]), "--n-head", str(GPT2["n_head"]), "--n-embd", str(GPT2["n_embd"]),
            "--vocab", str(GPT2["vocab"]), "--block", str(block), "--batch", str(batch), "--threads", str(threads),
            "--steps", str(steps), "--warmup", str(warmup)]


def measure(a, impl: str, setup: tuple, block: int, batch: int, threads: int, steps: int, warmup: int) -> dict:
    f = flags(block, batch, threads, steps, warmup)
    if impl == "potop":
        r = runbench.run_json([a.bench, "train"] + f)
    else:
        env, extra = setup
        r = runbench.run_json([runbench.PYTHON, os.path.join(HERE, "torch_bench.py"), "train"] + f + extra, env)
    r["block"], r["batch"] = block, batch
    log(f"{impl:7s} T {block:5d} batch {batch:3d} {threads} thr: {r['ms_per_step']:10.1f} ms/step "
        f"{r['tokens_per_s']:8.1f} tok/s {r['peak_rss_mib']:8.1f} MiB")
    return r


def torch_setup(a, threads: int, results: dict) -> tuple:
    """PyTorch's fastest set-up at this thread count, from one timed step of each variant on a
    batch of 2 × 256 (the OpenBLAS core type decides the GEMMs' speed at any size)."""
    timings = []
    for env, extra in runbench.TORCH_VARIANTS:
        r = measure(a, "pytorch", (env, extra), 256, 2, threads, 1, 1)
        timings.append((r["ms_per_step"], env, extra))
    results["torch_setup"][str(threads)] = [{"env": e, "flags": f, "ms_per_step": ms} for ms, e, f in timings]
    _, env, extra = min(timings, key=lambda x: x[0])
    return env, extra


def svg(path: str, sweep: dict) -> None:
    """tokens/s (left) and peak RSS (right) against T, potop and PyTorch, as a small SVG."""
    Ts = sorted({int(k) for k in sweep["potop"]})
    W, H, m = 720, 300, 60
    colours = {"potop": "#1f77b4", "pytorch": "#d62728"}

    def panel(x0: int, key: str, title: str) -> list[str]:
        top = max(sweep[i][str(t)][key] for i in sweep for t in Ts) * 1.1
        pw, ph = W / 2 - m - 25, H - 2 * m
        out = [f'<text x="{x0 + pw / 2}" y="20" text-anchor="middle">{title}</text>',
               f'<line x1="{x0}" y1="{m + ph}" x2="{x0 + pw}" y2="{m + ph}" stroke="black"/>',
               f'<line x1="{x0}" y1="{m}" x2="{x0}" y2="{m + ph}" stroke="black"/>']
        span = math.log2(Ts[-1] / Ts[0]) or 1.0  # T doubles along the axis: a log scale
        xs = {t: x0 + pw * math.log2(t / Ts[0]) / span for t in Ts}
        for t in Ts:
            out.append(f'<text x="{xs[t]}" y="{m + ph + 18}" text-anchor="middle" font-size="11">{t}</text>')
        for frac in (0, 0.5, 1):
            y = m + ph * (1 - frac)
            out.append(f'<text x="{x0 - 6}" y="{y + 4}" text-anchor="end" font-size="11">{top * frac:.0f}</text>')
        for impl in sweep:
            pts = " ".join(f"{xs[t]:.1f},{m + ph * (1 - sweep[impl][str(t)][key] / top):.1f}" for t in Ts)
            out.append(f'<polyline points="{pts}" fill="none" stroke="{colours[impl]}" stroke-width="2"/>')
            out += [f'<circle cx="{p.split(",")[0]}" cy="{p.split(",")[1]}" r="3" fill="{colours[impl]}"/>'
                    for p in pts.split()]
        out.append(f'<text x="{x0 + pw / 2}" y="{H - 12}" text-anchor="middle" font-size="12">context T</text>')
        return out

    body = panel(m, "tokens_per_s", "training tokens/s") + panel(W // 2 + m, "peak_rss_mib", "peak RSS, MiB")
    legend = [f'<text x="{m + 10 + 70 * i}" y="44" fill="{colours[impl]}" font-size="12">{impl}</text>'
              for i, impl in enumerate(sweep)]
    with open(path, "w") as f:
        f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif">\n'
                + "\n".join(body + legend) + "\n</svg>\n")


def potop_cmd(a, *args: str) -> None:
    r = subprocess.run([a.potop, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"potop {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-2000:]}")


def decode_bytes_per_token(weights: str, quant: str, prompt_tokens: int, new_tokens: int, kv_cache: str) -> float:
    """The bytes one cached decoding step reads at least: every tensor of the weights file but the
    position table and the token table, of which one row each; the LM head, which multiplies by
    the whole token table (a quantized model by its quantized copy, nn/lm_head.h); and the K and V
    of the positions before, at the mean context."""
    tensors = safetensors_tensors(weights)
    size = {k: v["data_offsets"][1] - v["data_offsets"][0] for k, v in tensors.items()}
    n_layer, n_embd, vocab = GPT2["n_layer"], GPT2["n_embd"], GPT2["vocab"]
    block_bytes = {"f32": 4 * 32, "q8_0": 34, "q4_0": 18}[quant]  # a block of 32 weights
    head = vocab * n_embd // 32 * block_bytes
    mean_context = prompt_tokens + new_tokens / 2
    kv_bytes = {"f32": 4, "f16": 2}[kv_cache]
    return (sum(size.values()) - size["wpe.weight"] - size["wte.weight"] + 2 * 4 * n_embd + head +
            kv_bytes * 2.0 * n_layer * n_embd * mean_context)


def generation(a, threads: list[int], results: dict) -> None:
    node = shutil.which("node")
    reference = os.path.join(ROOT, "tests", "gguf", "node_modules", "node-llama-cpp")
    data = [os.path.join(ROOT, "..", "shared", "data", f) for f in ("potop.txt", "tatoeba-eng-pol.tsv")]
    skip = ("no node on PATH" if not node else
            "tests/gguf has no node-llama-cpp (scripts/setup.sh --all installs it)" if not os.path.isdir(reference) else
            f"{a.potop} not found" if not os.path.exists(a.potop) else
            "../shared/data lacks potop.txt or tatoeba-eng-pol.tsv (a vocabulary of 50257 needs them)"
            if not all(os.path.exists(f) for f in data) else None)
    if skip:
        results["generate"] = {"skipped": skip}
        log(f"generate: skipped: {skip}")
        return
    with tempfile.TemporaryDirectory(prefix="potop-gpt2-generate-") as tmp:
        text = os.path.join(tmp, "text.txt")
        with open(text, "wb") as out:
            for f in data:
                with open(f, "rb") as src:
                    out.write(src.read())
        log("generate: a BPE tokenizer of 50257 tokens, one training step of GPT-2 124M, GGUF and potop quantize")
        potop_cmd(a, "tokenizer", "train", "--kind", "bpe", "--data", text, "--out", os.path.join(tmp, "tok"),
                  "--vocab-size", str(GPT2["vocab"]))
        model = os.path.join(tmp, "f32")
        potop_cmd(a, "train", "--data", text, "--tokenizer", os.path.join(tmp, "tok"), "--out", model,
                  "--n-layer", str(GPT2["n_layer"]), "--n-head", str(GPT2["n_head"]), "--n-embd", str(GPT2["n_embd"]),
                  "--block-size", "1024", "--batch-size", "1", "--steps", "1", "--eval-interval", "1000",
                  "--eval-iters", "1", "--threads", str(max(threads)))
        dirs, ggufs = {"f32": model}, {}
        for t in ("f32", "q8_0", "q4_0"):
            ggufs[t] = os.path.join(tmp, f"model-{t}.gguf")
            potop_cmd(a, "export", "-m", model, "--format", "gguf", "--type", t, "-o", ggufs[t])
            if t != "f32":
                dirs[t] = os.path.join(tmp, t)
                potop_cmd(a, "quantize", "-m", model, "--type", t, "--out", dirs[t])
        cells = {}
        line = r"{}[^:]*: ([\d.]+) tokens/s, \d+ thread\(s\); prompt of (\d+) tokens: ([\d.]+) tokens/s"
        for t in threads:
            for fmt in ("f32", "q8_0", "q4_0"):
                weights = os.path.join(dirs[fmt], "latest.safetensors" if fmt != "f32" else "best.safetensors")
                cell = cells[f"{fmt}/{t}"] = {
                    "llama_cpp": {"decode": 0.0, "prompt": 0.0, "runs": []}, "potop": {"decode": 0.0, "prompt": 0.0, "runs": []},
                    "gguf_bytes": os.path.getsize(ggufs[fmt]), "kv_cache": a.kv_cache,
                    "bytes_per_token": decode_bytes_per_token(weights, fmt, a.prompt_tokens, a.new_tokens, a.kv_cache)}
                for _ in range(a.repeats):
                    runbench.wait_quiet()
                    bw = runbench.run_json([a.bench, "bandwidth", "--threads", str(t)])["gbs"]
                    best_bw = results.setdefault("bandwidth_gbs", {})
                    best_bw[str(t)] = max(bw, best_bw.get(str(t), 0.0))
                    r = subprocess.run([node, os.path.join(HERE, "gguf_llama.mjs"), a.potop, dirs[fmt], ggufs[fmt],
                                        str(a.new_tokens), str(t), "@" + text, str(a.prompt_tokens), a.kv_cache],
                                       capture_output=True, text=True)
                    found = {"llama_cpp": re.search(line.format(r"llama\.cpp"), r.stdout),
                             "potop": re.search(line.format("potop sample"), r.stdout)}
                    if r.returncode != 0 or not all(found.values()):
                        raise RuntimeError(f"gguf_llama.mjs failed ({r.returncode}):\n{r.stdout}\n{r.stderr[-2000:]}")
                    for impl, m in found.items():
                        c = cell[impl]
                        c["runs"].append({"decode": float(m.group(1)), "prompt": float(m.group(3)), "bandwidth_gbs": bw})
                        c["decode"] = max(c["decode"], float(m.group(1)))
                        c["prompt"] = max(c["prompt"], float(m.group(3)))
                        c["prompt_tokens"] = int(m.group(2))
                log(f"{fmt:5s} {t} thr: decode llama.cpp {cell['llama_cpp']['decode']:.1f} potop "
                    f"{cell['potop']['decode']:.1f} tokens/s; prompt llama.cpp {cell['llama_cpp']['prompt']:.1f} "
                    f"potop {cell['potop']['prompt']:.1f} tokens/s")
        results["generate"] = {"cells": cells, "prompt_tokens": a.prompt_tokens, "new_tokens": a.new_tokens,
                               "kv_cache": a.kv_cache, "repeats": a.repeats}


def report_generation(results: dict, targets: list) -> None:
    g = results.get("generate")
    if not g:
        return
    print()
    if "skipped" in g:
        print(f"3. Generation vs llama.cpp: skipped: {g['skipped']}")
        return
    print(f"3. Generation vs llama.cpp (node-llama-cpp) on the same GGUF, greedy: a prompt of {g['prompt_tokens']} "
          f"tokens, then {g['new_tokens']} tokens, KV caches {g.get('kv_cache', 'f32 (potop), f16 (llama.cpp)')}; "
          f"tokens/s, the best of 3 runs in one process each, of {g.get('repeats', 1)} processes of each engine")
    hdr = (f"{'type':5s} {'thr':>3s} {'decode llama.cpp':>16s} {'potop':>7s} {'ratio':>6s}   "
           f"{'prompt llama.cpp':>16s} {'potop':>7s} {'ratio':>6s}   {'potop % of bandwidth bound':>26s}")
    print(hdr)
    print("-" * len(hdr))
    for key, c in g["cells"].items():
        fmt, t = key.split("/")
        lc, pp = c["llama_cpp"], c["potop"]
        bound = results["bandwidth_gbs"][t] * 1e9 / c["bytes_per_token"]
        print(f"{fmt:5s} {t:>3s} {lc['decode']:16.1f} {pp['decode']:7.1f} {pp['decode'] / lc['decode']:5.2f}x   "
              f"{lc['prompt']:16.1f} {pp['prompt']:7.1f} {pp['prompt'] / lc['prompt']:5.2f}x   "
              f"{100 * pp['decode'] / bound:5.1f}% of {bound:6.1f}")
        if lc["prompt_tokens"] != pp["prompt_tokens"]:
            print(f"      (the prompt is {lc['prompt_tokens']} tokens in llama.cpp, {pp['prompt_tokens']} in potop)")
    print("read bandwidth measured in this run: " + ", ".join(
        f"{t} thread(s) {gbs:.1f} GB/s" for t, gbs in results["bandwidth_gbs"].items()))
    for key, c in g["cells"].items():  # every type at every thread count
        fmt, t = key.split("/")
        lc, pp = c["llama_cpp"], c["potop"]
        targets.append((f"generation {fmt}, {t} thread(s): decode >= llama.cpp's", pp["decode"] >= lc["decode"],
                        f"{pp['decode'] / lc['decode']:.2f}x"))
        targets.append((f"generation {fmt}, {t} thread(s): prompt >= 0.8x llama.cpp's",
                        pp["prompt"] >= 0.8 * lc["prompt"], f"{pp['prompt'] / lc['prompt']:.2f}x"))
        if fmt == "q8_0":
            share = pp["decode"] / (results["bandwidth_gbs"][t] * 1e9 / c["bytes_per_token"])
            targets.append((f"generation q8_0, {t} thread(s): decode >= 85% of the bandwidth bound", share >= 0.85,
                            f"{100 * share:.1f}%"))


def report(results: dict) -> None:
    peak = {int(t): max(v) for t, v in results["peak"].items()}
    print(f"machine: {results['cpu']}; FMA peak measured in this run ({results['peak_isa']}): " + ", ".join(
        f"{t} thread{'s' if t > 1 else ''} {peak[t]:.1f} GFLOP/s" for t in sorted(peak)))
    print(f"load average {results['load_start']:.2f} at start, {results['load_end']:.2f} at end; other processes' "
          f"CPU use just before each measurement: median {100 * statistics.median(results['busy'] or [0]):.0f}%, "
          f"max {100 * max(results['busy'] or [0]):.0f}%; {results['minutes']:.1f} min in all")
    targets = []
    if results["train"]:
        print()
        c = results["train_config"]
        print(f"1. Training GPT-2 124M: 12 layers, 12 heads, 768 wide, vocabulary 50257, block {c['block']}, "
              f"batch {c['batch']} (random ids), median step of each process")
        hdr = f"{'thr':>3s} {'impl':8s} {'ms/step':>14s} {'tokens/s':>9s} {'GFLOP/s':>8s} {'MFU':>6s} {'peak RSS':>11s}"
        print(hdr)
        print("-" * len(hdr))
        for t, cell in results["train"].items():
            for impl in ("potop", "pytorch"):
                rs = cell[impl]
                tps = statistics.median(r["tokens_per_s"] for r in rs)
                ms = statistics.median(r["ms_per_step"] for r in rs)
                gf = tps * rs[0]["flops_per_token"] / 1e9
                rss = max(r["peak_rss_mib"] for r in rs)
                sp = runbench.spread([r["tokens_per_s"] for r in rs])
                print(f"{int(t):3d} {impl:8s} {ms:9.0f} ±{100 * sp:2.0f}% {tps:9.1f} {gf:8.1f} "
                      f"{100 * gf / peak[int(t)]:5.1f}% {rss:7.0f} MiB")
        print()
        print("potop / PyTorch, median of the rounds' paired tokens/s ratios (each round's in brackets); peak RSS")
        for t, cell in results["train"].items():
            ratio, per_round = runbench.paired_ratio(cell)
            rss = max(r["peak_rss_mib"] for r in cell["potop"]) / max(r["peak_rss_mib"] for r in cell["pytorch"])
            tps = statistics.median(r["tokens_per_s"] for r in cell["potop"])
            mfu = tps * cell["potop"][0]["flops_per_token"] / 1e9 / peak[int(t)]
            print(f"  {t} thread(s): {ratio:.2f}x [{', '.join(f'{x:.2f}' for x in per_round)}]   {rss:.2f}x RSS   "
                  f"MFU {100 * mfu:.1f}%")
            if int(t) == 2:
                targets += [("training at T 1024, 2 threads: >= 1.5x PyTorch tokens/s", ratio >= 1.5, f"{ratio:.2f}x"),
                            ("training at T 1024, 2 threads: peak RSS <= 0.5x PyTorch's", rss <= 0.5, f"{rss:.2f}x"),
                            ("training at T 1024, 2 threads: MFU >= 50% of the FMA peak", mfu >= 0.5,
                             f"{100 * mfu:.1f}%")]
        if results.get("torch_setup"):
            def best(v: list) -> str:
                b = min(v, key=lambda x: x["ms_per_step"])
                return f"{b['env'].get('OPENBLAS_CORETYPE') or 'as detected'} {' '.join(b['flags']) or 'for-loop'}"
            print("PyTorch set-up per thread count (OPENBLAS_CORETYPE, AdamW): " + ", ".join(
                f"{t}: {best(v)}" for t, v in results["torch_setup"].items()))
    if results["sweep"]:
        s = results["sweep"]
        print()
        print(f"2. Context sweep at {results['sweep_tokens']} tokens a step, {results['sweep_threads']} threads "
              f"(batch = tokens / T)")
        hdr = f"{'T':>5s} {'batch':>5s} {'potop tok/s':>12s} {'PyTorch tok/s':>14s} {'ratio':>6s} " \
              f"{'potop RSS':>10s} {'PyTorch RSS':>12s}"
        print(hdr)
        print("-" * len(hdr))
        Ts = sorted(int(k) for k in s["potop"])
        for T in Ts:
            p, q = s["potop"][str(T)], s["pytorch"][str(T)]
            print(f"{T:5d} {p['batch']:5d} {p['tokens_per_s']:12.1f} {q['tokens_per_s']:14.1f} "
                  f"{p['tokens_per_s'] / q['tokens_per_s']:5.2f}x {p['peak_rss_mib']:6.0f} MiB {q['peak_rss_mib']:8.0f} MiB")
        lo, hi = str(Ts[0]), str(Ts[-1])
        keep = {impl: s[impl][hi]["tokens_per_s"] / s[impl][lo]["tokens_per_s"] for impl in s}
        print(f"tokens/s at T {hi} over T {lo}: potop {keep['potop']:.2f}, PyTorch {keep['pytorch']:.2f}")
        targets.append((f"context sweep: potop's tokens/s at T {hi} >= 0.6x at T {lo}", keep["potop"] >= 0.6,
                        f"{keep['potop']:.2f}x"))
        if results.get("svg"):
            print(f"curve: {results['svg']}")
    report_generation(results, targets)
    if targets:
        print()
        print("Targets")
        for name, ok, value in targets:
            print(f"  [{'met' if ok else 'MISSED'}] {name}: {value}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "release", "bench", "potop_bench"))
    ap.add_argument("--potop", default=os.path.join(ROOT, "build", "release", "src", "potop"))
    ap.add_argument("--parts", default="train,sweep,generate")
    ap.add_argument("--quick", action="store_true", help="2 threads only, one round, 2 timed steps, a sweep of 3 "
                    "contexts with 1 timed step each, one process of each engine per generation cell")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--block", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=3, help="timed steps per process (after one warm-up step)")
    ap.add_argument("--contexts", default="128,256,512,1024,2048")
    ap.add_argument("--sweep-tokens", type=int, default=4096)
    ap.add_argument("--sweep-threads", type=int, default=2)
    ap.add_argument("--sweep-steps", type=int, default=2, help="timed steps per process in the sweep")
    ap.add_argument("--prompt-tokens", type=int, default=512, help="generate: the prompt's tokens")
    ap.add_argument("--new-tokens", type=int, default=128, help="generate: tokens decoded after the prompt")
    ap.add_argument("--kv-cache", choices=("f16", "f32"), default="f16",
                    help="generate: the KV cache type of both engines (f16: llama.cpp's default)")
    ap.add_argument("--repeats", type=int, default=3, help="generate: processes of each engine per cell (the best counts)")
    ap.add_argument("--svg", default=os.path.join(tempfile.gettempdir(), "potop-gpt2-sweep.svg"))
    ap.add_argument("--max-busy", type=float, default=0.1)
    ap.add_argument("--quiet-timeout", type=float, default=60)
    ap.add_argument("--json", default=os.path.join(tempfile.gettempdir(), "potop-gpt2-bench.json"))
    ap.add_argument("--report", metavar="JSON", help="print the tables of an earlier run's --json and exit")
    a = ap.parse_args()
    if a.report:
        with open(a.report) as f:
            report(json.load(f))
        return 0
    if a.quick:
        a.threads, a.rounds, a.steps, a.contexts, a.sweep_steps, a.repeats = "2", 1, 2, "256,1024,2048", 1, 1
    if not os.path.exists(a.bench):
        log(f"gpt2.py: {a.bench} not found; build it first (bash bench/run.sh gpt2 does)")
        return 2
    runbench.QUIET["max_busy"], runbench.QUIET["timeout"] = a.max_busy, a.quiet_timeout
    threads = [int(t) for t in a.threads.split(",")]
    parts = a.parts.split(",")
    started = time.time()
    results = {"cpu": cpu_name(), "load_start": os.getloadavg()[0], "peak": {}, "train": {}, "sweep": {},
               "torch_setup": {}, "train_config": {"block": a.block, "batch": a.batch}}

    def peak(t: int) -> None:
        r = runbench.run_json([a.bench, "peak", "--threads", str(t)])
        results["peak"].setdefault(str(t), []).append(r["gflops"])
        results["peak_isa"] = r["isa"]

    for t in sorted(set(threads + [a.sweep_threads])):
        peak(t)
    if "train" in parts:
        for t in threads:
            setup = torch_setup(a, t, results)
            cell = results["train"].setdefault(str(t), {"potop": [], "pytorch": [], "torch_setup": list(setup)})
            for rnd in range(a.rounds):
                for impl in (["potop", "pytorch"] if rnd % 2 == 0 else ["pytorch", "potop"]):
                    cell[impl].append(measure(a, impl, setup, a.block, a.batch, t, a.steps, 1))
    if "sweep" in parts:
        t = a.sweep_threads
        setup = results["train"].get(str(t), {}).get("torch_setup") or torch_setup(a, t, results)
        results["sweep_tokens"], results["sweep_threads"] = a.sweep_tokens, t
        sweep = results["sweep"] = {"potop": {}, "pytorch": {}}
        for i, T in enumerate(int(x) for x in a.contexts.split(",")):
            B = max(1, a.sweep_tokens // T)
            for impl in (["potop", "pytorch"] if i % 2 == 0 else ["pytorch", "potop"]):
                sweep[impl][str(T)] = measure(a, impl, tuple(setup), T, B, t, a.sweep_steps, 1)
        svg(a.svg, sweep)
        results["svg"] = a.svg
    if "generate" in parts:
        generation(a, threads, results)
    for t in sorted(set(threads + [a.sweep_threads])):
        peak(t)
    results["load_end"] = os.getloadavg()[0]
    results["busy"] = runbench.QUIET["busy"]
    results["minutes"] = (time.time() - started) / 60
    with open(a.json, "w") as f:
        json.dump(results, f, indent=1)
    report(results)
    log(f"raw results: {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
