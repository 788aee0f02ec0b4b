"""Quantized models (potop quantize: f16, q8_0, q4_0) against f32, in one run (issue 26).

    bash bench/run.sh quant [--quick]     # builds potop, serve_client and potop_bench, then runs this
    /usr/bin/python3 bench/quant.py --potop build/release/src/potop --bench build/release/bench/potop_bench

One model for every part: the mid generation model of bench/run.py (6 layers, 6 heads, 384 wide,
block 512), trained here on ../shared/data/potop.txt for a fixed budget (--steps, batch --batch,
the last 5% of the text held out), then `potop quantize`d to f16, q8_0 and q4_0. Without
../shared the speed, serving, memory and llama.cpp parts run on a model trained for one step on a
made-up text, and the quality parts say that they are skipped.

  1. Speed. `potop sample -n 500 --temperature 0 --num-samples K` (batch 1, greedy, KV cache; the
     rate of the K samples together, the model's loading left out) of each format and PyTorch's
     f32 generation of the same architecture (bench/torch_bench.py generate, KV cache, 500 new
     tokens), on 1 and 2 threads. A round runs every format and PyTorch back to back, the order
     reversed every other round; a cell is the median over rounds, and "vs f32" is the median of
     the rounds' paired ratios (format / f32 of the same round). "% bw" is tokens/s over the
     memory-bandwidth bound: the read bandwidth (potop_bench bandwidth, measured in this run, the
     best at that thread count) over the bytes a token reads at least, counted from the format's
     own safetensors file: each matrix at its stored size (f16 2, q8_0 34/32, q4_0 18/32 bytes a
     weight), the f32 tied embedding (read whole by the LM head), one row of the position table,
     the LayerNorms and biases, and the f32 keys and values of the mean context.
     FMA peak (potop_bench peak) and the load average come from the same run, as in run.py.
  2. Quality. `potop eval --json` on the held-out text (the model's own validation split: the last
     5%, --eval-chars of it with --quick) for each format, the loss difference to f32; the greedy
     500 tokens of part 1 (1 thread, first round) compared with f32's position by position, and the
     identical prefix. Translation: `potop translate train` of the 3 + 3 x 128 model
     (docs/translation.md's recipe, block 48, BPE 4000) for --translate-steps steps on
     ../shared/data/tatoeba-eng-pol.tsv (en -> pl), quantized the same three ways, and
     `potop translate eval` greedy on its test.tsv: BLEU, chrF and sentences/s per format.
  3. Serving. `potop serve` (16 slots, its default threads) with bench/serve_client at 16 clients,
     plain completions of 32 tokens, --serve-seconds each, f32, q8_0 and q4_0 (bench/serve_load.py's
     functions): aggregate tokens/s and the ratio to f32.
  4. Memory and files. Peak RSS of each `potop sample` process of part 1 (its own, from wait4) and
     the size of the weights file each format loads.
  5. llama.cpp. `potop export --format gguf` (q8_0 and f32), then bench/gguf_llama.mjs: llama.cpp's
     generation tokens/s (node-llama-cpp) beside potop sample's on the matching directory (q8_0
     GGUF with potop's q8_0 directory, f32 with f32), best of 3 each, both engines with f16 KV
     caches (llama.cpp's default; gguf_llama.mjs's default). Skipped with a message when
     node or tests/gguf/node_modules is absent.
Prints a table per part, the goals (q8_0 >= 2.5x and q4_0 >= 4x f32's tokens/s; q8_0's held-out
loss within 0.005 nats of f32's) as met or MISSED, and one final JSON line with every number.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run as runbench  # noqa: E402  (bench/run.py: peak, bandwidth, the quiet wait, the token file)
import serve_load  # noqa: E402
from machine import cpu_name  # noqa: E402

PYTHON = "/usr/bin/python3"
CORPUS = os.path.join(ROOT, "..", "shared", "data", "potop.txt")
PAIRS = os.path.join(ROOT, "..", "shared", "data", "tatoeba-eng-pol.tsv")
FORMATS = ["f32", "f16", "q8_0", "q4_0"]
MODEL = {"n_layer": 6, "n_head": 6, "n_embd": 384, "block": 512}  # bench/run.py's GENERATE
PROMPT = "Pan "
NEW_TOKENS = 500
VAL_FRACTION = 0.05
TRANSLATE_MODEL = ["--vocab-size", "4000", "--n-layer", "3", "--n-head", "4", "--n-embd", "128", "--block-size", "48",
                   "--batch-tokens", "2048", "--lr-schedule", "cosine", "--lr", "1e-3", "--min-lr", "1e-5"]
TIMEOUT = 900  # seconds: no child of this benchmark should take longer


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", TIMEOUT), **kw)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return out


def run_rusage(cmd: list[str], tmp: str) -> tuple[str, str, float]:
    """(stdout, stderr, peak RSS in MiB) of one child. Not wait4's ru_maxrss: a child forked (or
    vforked) by Python inherits Python's high-water mark across exec. /usr/bin/time (package time,
    scripts/setup.sh --all) forks it from a small process instead and prints its peak."""
    rss_file = os.path.join(tmp, "rss")
    with open(os.path.join(tmp, "out"), "w+") as out, open(os.path.join(tmp, "err"), "w+") as err:
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd, stdout=out, stderr=err, text=True)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr[-2000:]}")
    with open(rss_file) as f:
        return stdout, stderr, int(f.read().split()[-1]) / 1024.0


def safetensors_tensors(path: str) -> dict:
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    header.pop("__metadata__", None)
    return header


def bytes_per_token(weights: str, prompt_tokens: int) -> dict:
    """The bytes one cached decode step reads at least, from the weights file's tensors."""
    tensors = safetensors_tensors(weights)
    size = {k: v["data_offsets"][1] - v["data_offsets"][0] for k, v in tensors.items()}
    n_embd = tensors["wpe.weight"]["shape"][1]
    n_layer = sum(1 for k in tensors if k.endswith(".ln_1.weight"))
    matrices = sum(s for k, s in size.items() if k.startswith("h.") and k.endswith(".weight") and
                   len(tensors[k]["shape"]) == 2)
    embedding = size["wte.weight"]
    position_row = 4 * n_embd
    small = sum(s for k, s in size.items()) - matrices - embedding - size["wpe.weight"]
    # Token k (k >= 2) of n is decoded at context prompt + k - 1; the first comes with the prompt.
    mean_context = prompt_tokens - 1 + (NEW_TOKENS + 1) / 2
    kv = 4.0 * 2 * n_layer * n_embd * mean_context
    return {"matrices": matrices, "embedding": embedding, "position_row": position_row,
            "norms_biases": small, "kv_cache": kv, "total": matrices + embedding + position_row + small + kv}


def weights_of(model_dir: str) -> str:
    """The weights file potop loads from a directory (potop quantize writes latest.safetensors)."""
    for name in ("latest.safetensors", "best.safetensors"):
        p = os.path.join(model_dir, name)
        if os.path.exists(p):
            return p
    raise RuntimeError(f"no weights in {model_dir}")


def quiet(a) -> None:
    """Bounds the next wait for a quiet machine by what is left of --quiet-total: once it is spent,
    every later wait_quiet samples the CPU use once (it is still reported) and goes on."""
    left = max(0.0, a.quiet_total - runbench.QUIET["waited"])
    runbench.QUIET["timeout"] = min(a.quiet_timeout, left)


# ---------------------------------------------------------------- the model


def train_model(a, tmp: str, results: dict) -> tuple[str, str | None]:
    """Trains the mid model; returns (model dir, held-out text file or None)."""
    out = os.path.join(tmp, "mid")
    flags = ["--n-layer", str(MODEL["n_layer"]), "--n-head", str(MODEL["n_head"]), "--n-embd", str(MODEL["n_embd"]),
             "--block-size", str(MODEL["block"]), "--batch-size", str(a.batch), "--val-fraction", str(VAL_FRACTION),
             "--log-interval", "100000", "--json"]
    if os.path.exists(CORPUS):
        data, steps = CORPUS, a.steps
        flags += ["--steps", str(steps), "--warmup", str(max(1, steps // 10)), "--eval-interval", str(steps),
                  "--eval-iters", "20" if not a.quick else "4"]
    else:
        data, steps = os.path.join(tmp, "made-up.txt"), 1
        with open(data, "w", encoding="utf-8") as f:
            for i in range(20000):
                f.write(f"Kmicic ruszył z kopyta, a pan Zagłoba zawołał: mości panowie, {i}!\n")
        flags += ["--steps", "1", "--warmup", "1", "--eval-interval", "1", "--eval-iters", "1"]
    log(f"training the mid model on {os.path.normpath(data)}: {steps} steps, batch {a.batch} x {MODEL['block']}")
    t0 = time.time()
    r = run([a.potop, "train", "--data", data, "--out", out, *flags])
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    m = re.search(r"train (\d+) / val (\d+) tokens", r.stderr)
    results["model"] = {"data": os.path.normpath(data), "steps": steps, "batch": a.batch, "block": MODEL["block"],
                        "train_seconds": round(time.time() - t0, 1), "val_loss": summary.get("final_val_loss"),
                        "summary": summary, "trained": data == CORPUS}
    if data != CORPUS:
        return out, None
    # The held-out text: the model's validation split, the last val tokens (characters) of the text.
    text = open(CORPUS, encoding="utf-8").read()
    val = int(m.group(2)) if m else int(len(text) * VAL_FRACTION)
    held = text[len(text) - val:]
    if a.eval_chars and len(held) > a.eval_chars:
        held = held[:a.eval_chars]
    path = os.path.join(tmp, "held-out.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(held)
    results["model"]["held_out_chars"] = len(held)
    return out, path


def quantize(a, model: str, results: dict, key: str) -> dict:
    dirs = {"f32": model}
    for fmt in FORMATS[1:]:
        out = f"{model}-{fmt}"
        t0 = time.time()
        r = run([a.potop, "quantize", "-m", model, "--type", fmt, "--out", out])
        isa = re.search(r"quantized \d+ matrices to \S+ \((\w+)", r.stderr)
        if isa:
            results["quant_isa"] = isa.group(1)
        results.setdefault("quantize_seconds", {}).setdefault(key, {})[fmt] = round(time.time() - t0, 2)
        dirs[fmt] = out
    return dirs


# ---------------------------------------------------------------- parts


def speed(a, dirs: dict, tokens: str, tmp: str, threads: list[int], results: dict) -> None:
    torch_bench = [PYTHON, os.path.join(HERE, "torch_bench.py"), "generate", "--n-layer", str(MODEL["n_layer"]),
                   "--n-head", str(MODEL["n_head"]), "--n-embd", str(MODEL["n_embd"]), "--block", str(MODEL["block"]),
                   "--tokens", tokens, "--new-tokens", str(NEW_TOKENS)]
    cells = {str(t): {impl: [] for impl in FORMATS + ["pytorch"]} for t in threads}
    for rnd in range(a.rounds):
        for t in threads:
            order = FORMATS + ["pytorch"]
            if rnd % 2:
                order = order[::-1]
            for impl in order:
                quiet(a)
                if impl == "pytorch":
                    r = runbench.run_json(torch_bench + ["--threads", str(t)])
                    cell = {"tokens_per_s": r["tokens_per_s"], "peak_rss_mib": r["peak_rss_mib"]}
                else:
                    runbench.wait_quiet()
                    stdout, _, rss = run_rusage(
                        [a.potop, "sample", "-m", dirs[impl], "-p", PROMPT, "-n", str(NEW_TOKENS), "--temperature", "0",
                         "--num-samples", str(a.samples), "--json", "-t", str(t)], tmp)
                    r = json.loads(stdout)
                    texts = {s["text"] for s in r["samples"]}
                    cell = {"tokens_per_s": r["tokens_per_s"], "peak_rss_mib": rss, "text": r["samples"][0]["text"],
                            "samples_identical": len(texts) == 1, "weights": r["checkpoint"]}
                cells[str(t)][impl].append(cell)
                log(f"speed round {rnd + 1}/{a.rounds} {t} thread(s) {impl:7s} {cell['tokens_per_s']:8.1f} tokens/s "
                    f"{cell['peak_rss_mib']:7.1f} MiB")
    results["speed"] = cells
    results["bytes_per_token"] = {fmt: bytes_per_token(weights_of(dirs[fmt]), len(PROMPT)) for fmt in FORMATS}


def quality(a, dirs: dict, held_out: str, results: dict) -> None:
    q = {}
    for fmt in FORMATS:
        t0 = time.time()
        r = run([a.potop, "eval", "-m", dirs[fmt], "--data", held_out, "--json"])
        q[fmt] = json.loads(r.stdout.strip().splitlines()[-1])
        q[fmt]["seconds"] = round(time.time() - t0, 1)
        log(f"eval {fmt:5s} loss {q[fmt]['loss']:.5f} ({q[fmt]['seconds']} s)")
    results.setdefault("quality", {})["eval"] = q


def greedy_agreement(results: dict, threads: list[int]) -> None:
    """Each format's greedy tokens against f32's (1 thread, first round; a char model: a token per code point)."""
    t = str(min(threads))
    cells = results["speed"][t]
    ref = cells["f32"][0]["text"][len(PROMPT):]
    agree = {}
    for fmt in FORMATS:
        text = cells[fmt][0]["text"][len(PROMPT):]
        n = min(len(ref), len(text))
        same = sum(1 for x, y in zip(ref, text) if x == y)
        prefix = next((i for i in range(n) if ref[i] != text[i]), n)
        agree[fmt] = {"tokens": n, "same_position": same, "share": same / n if n else 0.0, "identical_prefix": prefix}
    # The same format on other thread counts and rounds: greedy decoding should not depend on them.
    stable = {}
    for fmt in FORMATS:
        texts = {c["text"] for tt in results["speed"] for c in results["speed"][tt][fmt]}
        stable[fmt] = len(texts) == 1
    results.setdefault("quality", {})["greedy"] = agree
    results["quality"]["greedy_same_across_threads_and_rounds"] = stable
    results["quality"]["greedy_text"] = {fmt: cells[fmt][0]["text"] for fmt in FORMATS}


def translation(a, tmp: str, results: dict) -> None:
    out = os.path.join(tmp, "en-pl")
    steps = a.translate_steps
    log(f"training the translation model: {steps} steps")
    t0 = time.time()
    run([a.potop, "translate", "train", "--data", PAIRS, "--source", "en", "--target", "pl", "--out", out,
         *TRANSLATE_MODEL, "--steps", str(steps), "--warmup", str(min(200, steps // 5)), "--eval-interval", str(steps),
         "--eval-sentences", "100", "--log-interval", "100000", "--json"])
    train_s = time.time() - t0
    dirs = quantize(a, out, results, "translate")
    test = os.path.join(out, "test.tsv")
    scores = {}
    for fmt in FORMATS:
        cmd = [a.potop, "translate", "eval", "-m", dirs[fmt], "--data", test]
        if a.translate_limit:
            cmd += ["--limit", str(a.translate_limit)]
        r = run(cmd)
        text = r.stdout + r.stderr
        bleu = re.search(r"BLEU ([\d.]+)", text)
        chrf = re.search(r"chrF ([\d.]+)", text)
        sps = re.search(r"(\d+) sentences .*?, greedy, ([\d.]+) s \(([\d.]+) sentences/s\)", text)
        scores[fmt] = {"bleu": float(bleu.group(1)), "chrf": float(chrf.group(1)),
                       "sentences": int(sps.group(1)) if sps else None,
                       "sentences_per_s": float(sps.group(3)) if sps else None,
                       "weights_bytes": os.path.getsize(weights_of(dirs[fmt]))}
        log(f"translate eval {fmt:5s} BLEU {scores[fmt]['bleu']:.2f} chrF {scores[fmt]['chrf']:.2f} "
            f"{scores[fmt]['sentences_per_s']} sentences/s")
    results["translation"] = {"steps": steps, "train_seconds": round(train_s, 1), "scores": scores,
                              "test_pairs": a.translate_limit or "all (test.tsv)"}


def serving(a, dirs: dict, results: dict) -> None:
    client = os.path.join(os.path.dirname(os.path.abspath(a.potop)), "..", "bench", "serve_client")
    if not os.access(client, os.X_OK):
        results["serve"] = {"skipped": f"no load client at {client} (build serve_client)"}
        return
    fmts = ["f32", "q8_0", "q4_0"]
    cells = {fmt: [] for fmt in fmts}
    for rnd in range(a.serve_rounds):
        for fmt in (fmts if rnd % 2 == 0 else fmts[::-1]):
            quiet(a)
            runbench.wait_quiet()
            proc, port = serve_load.start_server(a.potop, dirs[fmt], 16, 64, 0)
            try:
                serve_load.streamed(port, {"prompt": serve_load.PROMPT, "max_tokens": 8})  # warm up
                r = serve_load.load(client, port, 16, a.serve_seconds, 32, False)
            finally:
                proc.terminate()
                proc.wait()
            cells[fmt].append({"tokens_per_s": r["tokens_per_s"], "rps": r["rps"], "failed": r["failed"],
                               "latency_p50_ms": r["latency_p50_ms"], "latency_p99_ms": r["latency_p99_ms"]})
            log(f"serve round {rnd + 1}/{a.serve_rounds} {fmt:5s} 16 clients {r['tokens_per_s']:8.0f} tokens/s "
                f"({r['failed']} failed)")
    results["serve"] = {"clients": 16, "max_tokens": 32, "seconds": a.serve_seconds, "cells": cells}


def llama(a, dirs: dict, tmp: str, threads: list[int], results: dict) -> None:
    mods = os.path.join(ROOT, "tests", "gguf", "node_modules")
    node = shutil.which("node")
    if not node or not os.path.isdir(mods):
        results["llama_cpp"] = {"skipped": "no node on PATH" if not node else
                                "tests/gguf/node_modules is absent (npm ci in tests/gguf; scripts/setup.sh --all)"}
        return
    cells = {}
    for fmt in ("q8_0", "f32"):
        gguf = os.path.join(tmp, f"mid-{fmt}.gguf")
        run([a.potop, "export", "-m", dirs["f32"], "--format", "gguf", "--type", fmt, "--out", gguf])
        for t in threads:
            quiet(a)
            runbench.wait_quiet()
            r = run([node, os.path.join(HERE, "gguf_llama.mjs"), a.potop, dirs[fmt], gguf, str(NEW_TOKENS), str(t),
                     PROMPT])
            lc = re.search(r"llama\.cpp [^:]*: ([\d.]+) tokens/s", r.stdout)
            pp = re.search(r"potop sample [^:]*: ([\d.]+) tokens/s", r.stdout)
            cells[f"{fmt}/{t}"] = {"llama_cpp": float(lc.group(1)), "potop": float(pp.group(1)),
                                   "gguf_bytes": os.path.getsize(gguf)}
            log(f"llama.cpp {fmt} {t} thread(s): {lc.group(1)} tokens/s, potop {pp.group(1)}")
    results["llama_cpp"] = cells


# ---------------------------------------------------------------- report


def med(values):
    return statistics.median(values) if values else float("nan")


def spread(values: list[float]) -> float:
    m = med(values)
    return (max(values) - min(values)) / m if m else 0.0


def report(results: dict, threads: list[int]) -> list:
    goals = []
    peak = {int(t): max(v) for t, v in results["peak"].items()}
    gbs = {int(t): max(v) for t, v in results["bandwidth_gbs"].items()}
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs; quantized kernels: {results.get('quant_isa', '?')}")
    print(f"FMA peak measured in this run with {results.get('peak_isa', '?')} FMA: " + ", ".join(
        f"{t} thread{'s' if t > 1 else ''} {peak[t]:.1f} GFLOP/s" for t in sorted(peak)))
    print("read bandwidth measured in this run: " + ", ".join(
        f"{t} thread{'s' if t > 1 else ''} {gbs[t]:.1f} GB/s" for t in sorted(gbs)))
    print(f"load average: {results['load_average_start']:.2f} at start, {results['load_average_end']:.2f} at end")
    b = results["quiet"]["busy_before_each"]
    if b:
        print(f"other processes' CPU use just before each measurement: median {100 * med(b):.0f}%, max {100 * max(b):.0f}%"
              f" (waited {results['quiet']['waited_s']:.0f} s for quiet)")
    m = results["model"]
    print(f"model: 6 layers, 6 heads, 384 wide, block 512, trained {m['steps']} steps of batch {m['batch']} on "
          f"{m['data']} in {m['train_seconds']:.0f} s (val loss {m['val_loss']})")

    # 1. speed
    sp = results["speed"]
    bpt = results["bytes_per_token"]
    print()
    print(f"1. Speed: {NEW_TOKENS} new tokens at batch 1, greedy, KV cache (potop sample, {results['samples']} samples "
          f"a run; PyTorch: bench/torch_bench.py, f32); median of {results['rounds']} round(s), ± = spread")
    hdr = (f"{'thr':>3s} {'format':7s} {'tokens/s':>15s} {'vs f32':>7s} {'MB/token':>9s} {'bound tok/s':>11s} "
           f"{'% bw':>6s}  (paired ratio per round)")
    print(hdr)
    print("-" * len(hdr))
    summary = {}
    for t in threads:
        cells = sp[str(t)]
        f32 = [c["tokens_per_s"] for c in cells["f32"]]
        for impl in FORMATS + ["pytorch"]:
            v = [c["tokens_per_s"] for c in cells[impl]]
            per_round = [x / y for x, y in zip(v, f32)]
            ratio = med(per_round)
            if impl in bpt:
                by = bpt[impl]["total"]
                bound = gbs[t] * 1e9 / by
                extra = f"{by / 1e6:9.2f} {bound:11.0f} {100 * med(v) / bound:5.0f}%"
            else:
                extra = f"{'':9s} {'':11s} {'':6s}"
            rounds = ", ".join(f"{x:.2f}" for x in per_round)
            print(f"{t:3d} {impl:7s} {med(v):8.1f} ±{100 * spread(v):3.0f}% {ratio:6.2f}x {extra}  [{rounds}]")
            summary[f"{t}/{impl}"] = {"tokens_per_s": med(v), "vs_f32": ratio, "per_round_vs_f32": per_round,
                                      "bound_tokens_per_s": gbs[t] * 1e9 / bpt[impl]["total"] if impl in bpt else None}
        pt = [x / y for x, y in zip(f32, [c["tokens_per_s"] for c in cells["pytorch"]])]
        print(f"    potop f32 / PyTorch f32: {med(pt):.2f}x [{', '.join(f'{x:.2f}' for x in pt)}]")
        summary[f"{t}/f32_vs_pytorch"] = med(pt)
        goals.append((f"{t} thread{'s' if t > 1 else ''}: q8_0 >= 2.5x f32 tokens/s", summary[f"{t}/q8_0"]["vs_f32"] >= 2.5,
                      f"{summary[f'{t}/q8_0']['vs_f32']:.2f}x"))
        goals.append((f"{t} thread{'s' if t > 1 else ''}: q4_0 >= 4x f32 tokens/s", summary[f"{t}/q4_0"]["vs_f32"] >= 4.0,
                      f"{summary[f'{t}/q4_0']['vs_f32']:.2f}x"))
    print("MB/token: " + "; ".join(
        f"{fmt} {bpt[fmt]['matrices'] / 1e6:.2f} matrices + {bpt[fmt]['embedding'] / 1e6:.3f} f32 embedding (LM head) + "
        f"{(bpt[fmt]['norms_biases'] + bpt[fmt]['position_row']) / 1e6:.3f} norms, biases, position row + "
        f"{bpt[fmt]['kv_cache'] / 1e6:.2f} KV cache" for fmt in ("f32", "q4_0")) +
        "; bound = read bandwidth / bytes per token (over 100% where the weights stay in cache)")
    results["speed_summary"] = summary

    # 2. quality
    print()
    q = results.get("quality", {})
    if "eval" in q:
        ev = q["eval"]
        base = ev["f32"]["loss"]
        print(f"2. Quality: held-out loss ({ev['f32']['tokens']} tokens, the model's validation split) and greedy "
              f"tokens vs f32 ({NEW_TOKENS} new tokens, 1 thread)")
        hdr = f"{'format':7s} {'loss':>9s} {'Δ vs f32':>10s} {'same tokens':>12s} {'identical prefix':>17s} {'eval s':>7s}"
        print(hdr)
        print("-" * len(hdr))
        for fmt in FORMATS:
            g = q["greedy"][fmt]
            print(f"{fmt:7s} {ev[fmt]['loss']:9.5f} {ev[fmt]['loss'] - base:+10.5f} {100 * g['share']:11.1f}% "
                  f"{g['identical_prefix']:10d} of {g['tokens']} {ev[fmt]['seconds']:7.1f}")
        d8 = ev["q8_0"]["loss"] - base
        goals.append(("q8_0 held-out loss within 0.005 nats of f32", abs(d8) <= 0.005, f"{d8:+.5f}"))
        unstable = [f for f, ok in q["greedy_same_across_threads_and_rounds"].items() if not ok]
        print("greedy text the same on every thread count and round: " +
              ("yes, every format" if not unstable else "NO for " + ", ".join(unstable)))
        for fmt in FORMATS:
            print(f"  {fmt:5s} {q['greedy_text'][fmt][:100]!r}")
    elif "greedy" in q:
        print("2. Quality: skipped (no ../shared/data/potop.txt: the model is untrained); greedy agreement of the "
              "untrained model: " + ", ".join(f"{f} {100 * g['share']:.0f}%" for f, g in q["greedy"].items()))
    tr = results.get("translation")
    if tr and "scores" in tr:
        s = tr["scores"]
        print(f"translation en -> pl, 3 + 3 x 128, {tr['steps']} steps ({tr['train_seconds']:.0f} s), "
              f"potop translate eval greedy on test.tsv ({s['f32']['sentences']} pairs)")
        hdr = f"{'format':7s} {'BLEU':>6s} {'Δ':>6s} {'chrF':>6s} {'Δ':>6s} {'sentences/s':>12s} {'weights MiB':>12s}"
        print(hdr)
        print("-" * len(hdr))
        for fmt in FORMATS:
            print(f"{fmt:7s} {s[fmt]['bleu']:6.2f} {s[fmt]['bleu'] - s['f32']['bleu']:+6.2f} {s[fmt]['chrf']:6.2f} "
                  f"{s[fmt]['chrf'] - s['f32']['chrf']:+6.2f} {s[fmt]['sentences_per_s'] or 0:12.1f} "
                  f"{s[fmt]['weights_bytes'] / 2**20:12.2f}")
    elif tr:
        print(f"translation: {tr['skipped']}")

    # 3. serving
    print()
    sv = results.get("serve", {})
    if "cells" in sv:
        print(f"3. Serving: potop serve, 16 clients, plain completions of {sv['max_tokens']} tokens, {sv['seconds']} s "
              f"each, median of {len(sv['cells']['f32'])} round(s)")
        base = med([c["tokens_per_s"] for c in sv["cells"]["f32"]])
        for fmt, cells in sv["cells"].items():
            v = med([c["tokens_per_s"] for c in cells])
            failed = sum(c["failed"] for c in cells)
            print(f"  {fmt:5s} {v:8.0f} tokens/s {v / base:5.2f}x f32   latency p50 "
                  f"{med([c['latency_p50_ms'] for c in cells]):.0f} ms, p99 {med([c['latency_p99_ms'] for c in cells]):.0f} ms"
                  + (f"  ({failed} failed)" if failed else ""))
    else:
        print(f"3. Serving: {sv.get('skipped', 'not run')}")

    # 4. memory and files
    print()
    print("4. Memory and files: peak RSS of potop sample (max over its runs in part 1) and the weights file")
    for fmt in FORMATS + ["pytorch"]:
        rss = {t: max(c["peak_rss_mib"] for c in sp[str(t)][fmt]) for t in threads}
        size = ""
        if fmt in results["weights_bytes"]:
            size = f"   file {results['weights_bytes'][fmt] / 2**20:7.2f} MiB"
        print(f"  {fmt:7s} peak RSS " + ", ".join(f"{t} thr {rss[t]:6.1f} MiB" for t in threads) + size)

    # 5. llama.cpp
    print()
    lc = results.get("llama_cpp", {})
    if "skipped" in lc:
        print(f"5. llama.cpp: skipped: {lc['skipped']}")
    else:
        print(f"5. llama.cpp (node-llama-cpp) vs potop sample, {NEW_TOKENS} tokens, greedy, best of 3 each")
        for key, c in lc.items():
            fmt, t = key.split("/")
            print(f"  {fmt:5s} {t} thr  llama.cpp {c['llama_cpp']:7.0f} tokens/s   potop {c['potop']:7.0f} tokens/s "
                  f"  potop / llama.cpp {c['potop'] / c['llama_cpp']:.2f}x   (GGUF {c['gguf_bytes'] / 2**20:.2f} MiB)")

    print()
    print("Goals")
    for what, ok, value in goals:
        print(f"  [{'met' if ok else 'MISSED'}] {what}: {value}")
    return goals


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--potop", default=os.path.join(ROOT, "build", "release", "src", "potop"))
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "release", "bench", "potop_bench"))
    ap.add_argument("--quick", action="store_true", help="smaller budgets: a short pass of every part (under ~4 min)")
    ap.add_argument("--rounds", type=int, default=0, help="speed rounds (default 5, --quick 1)")
    ap.add_argument("--samples", type=int, default=0, help="500-token samples per potop sample run (default 3, --quick 2)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--steps", type=int, default=0, help="training steps of the mid model (default 600, --quick 40)")
    ap.add_argument("--batch", type=int, default=2, help="its batch size (sequences of 512)")
    ap.add_argument("--eval-chars", type=int, default=-1, help="held-out characters scored (default all, --quick 20000)")
    ap.add_argument("--translate-steps", type=int, default=0, help="translation training steps (default 1000, --quick 200)")
    ap.add_argument("--translate-limit", type=int, default=-1, help="test pairs translated (default all, --quick 300)")
    ap.add_argument("--serve-seconds", type=float, default=0, help="load per format (default 5, --quick 2)")
    ap.add_argument("--serve-rounds", type=int, default=0, help="serving rounds (default 2, --quick 1)")
    ap.add_argument("--no-translate", action="store_true")
    ap.add_argument("--max-busy", type=float, default=0.1,
                    help="before each timed measurement, wait until other processes use at most this fraction of the "
                         "CPUs (1 = never wait)")
    ap.add_argument("--quiet-timeout", type=float, default=60, help="longest wait for a quiet machine, seconds each")
    ap.add_argument("--quiet-total", type=float, default=-1,
                    help="longest wait for quiet in all, seconds (default 300, --quick 30)")
    ap.add_argument("--json", default=os.path.join(tempfile.gettempdir(), "potop-quant-bench.json"))
    ap.add_argument("--keep", action="store_true", help="keep the models (the temporary directory is printed)")
    a = ap.parse_args()
    q = a.quick
    a.rounds = a.rounds or (1 if q else 5)
    a.samples = a.samples or (2 if q else 3)
    a.steps = a.steps or (40 if q else 600)
    a.eval_chars = a.eval_chars if a.eval_chars >= 0 else (20000 if q else 0)
    a.translate_steps = a.translate_steps or (200 if q else 1000)
    a.translate_limit = a.translate_limit if a.translate_limit >= 0 else (300 if q else 0)
    a.serve_seconds = a.serve_seconds or (2 if q else 5)
    a.serve_rounds = a.serve_rounds or (1 if q else 2)
    a.quiet_total = a.quiet_total if a.quiet_total >= 0 else (30 if q else 300)
    runbench.QUIET["max_busy"], runbench.QUIET["timeout"] = a.max_busy, a.quiet_timeout
    threads = [int(t) for t in a.threads.split(",")]
    for exe in (a.potop, a.bench):
        if not os.access(exe, os.X_OK):
            log(f"quant.py: {exe} not found; build it first (bash bench/run.sh quant does)")
            return 2

    started = time.time()
    tmp = tempfile.mkdtemp(prefix="potop-quant-")
    results: dict = {"quick": q, "rounds": a.rounds, "samples": a.samples, "threads": threads, "peak": {},
                     "bandwidth_gbs": {}, "load_average_start": os.getloadavg()[0]}
    log(f"quant.py: {tmp}; load average {results['load_average_start']:.2f}")
    try:
        def measure_machine() -> None:
            for t in threads:
                quiet(a)
                r = runbench.run_json([a.bench, "peak", "--threads", str(t)])
                results["peak"].setdefault(str(t), []).append(r["gflops"])
                results["peak_isa"] = r["isa"]
                quiet(a)
                r = runbench.run_json([a.bench, "bandwidth", "--threads", str(t)])
                results["bandwidth_gbs"].setdefault(str(t), []).append(r["gbs"])

        measure_machine()
        model, held_out = train_model(a, tmp, results)
        dirs = quantize(a, model, results, "gpt")
        results["weights_bytes"] = {fmt: os.path.getsize(weights_of(dirs[fmt])) for fmt in FORMATS}
        tokens = os.path.join(tmp, "tokens.i32")
        results["tokens"] = runbench.write_tokens(tokens)
        speed(a, dirs, tokens, tmp, threads, results)
        greedy_agreement(results, threads)
        if held_out:
            quality(a, dirs, held_out, results)
        if a.no_translate:
            results["translation"] = {"skipped": "--no-translate"}
        elif not os.path.exists(PAIRS):
            results["translation"] = {"skipped": "skipped: no ../shared/data/tatoeba-eng-pol.tsv"}
        else:
            translation(a, tmp, results)
        serving(a, dirs, results)
        llama(a, dirs, tmp, threads if not q else threads[:1], results)
        measure_machine()
    finally:
        if a.keep:
            log(f"models kept in {tmp}")
        else:
            shutil.rmtree(tmp, True)
    results["load_average_end"] = os.getloadavg()[0]
    results["quiet"] = {"max_busy": runbench.QUIET["max_busy"], "waited_s": runbench.QUIET["waited"],
                        "busy_before_each": runbench.QUIET["busy"]}
    results["seconds"] = round(time.time() - started, 1)
    with open(a.json, "w") as f:  # before the report, so that its numbers survive a failure there
        json.dump(results, f, indent=1)
    goals = report(results, threads)
    results["goals"] = [{"goal": w, "met": ok, "value": v} for w, ok, v in goals]
    with open(a.json, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nquant benchmark: {results['seconds']:.0f} s; raw results: {a.json}")
    # One line with every number (the greedy texts left out: they are in the raw results).
    line = {k: v for k, v in results.items() if k not in ("speed",)}
    line["quality"] = {k: v for k, v in results.get("quality", {}).items() if k != "greedy_text"}
    line["speed"] = {t: {impl: [{k: v for k, v in c.items() if k not in ("text",)} for c in cells]
                         for impl, cells in by.items()} for t, by in results["speed"].items()}
    print(json.dumps(line, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
