"""potop vs PyTorch, side by side: training and generation throughput (docs/performance.md).

    bash bench/run.sh            # builds the release preset, then runs this with its defaults
    /usr/bin/python3 bench/run.py --bench build/release/bench/potop_bench [--rounds 3] [--quick]

What it does, in one run:
  1. Measures the FMA peak of this CPU at each thread count (potop_bench peak: every thread runs
     independent multiply-add chains of the widest FMA the CPU has, AVX-512 where it has it, and
     the clock, to give the peak per cycle too), before and after the rest; the higher counts.
  2. Gives PyTorch its best set-up: for each configuration and thread count it tries the variants
     below for a few steps and keeps the fastest (OpenBLAS core type: as OpenBLAS detects it, as
     the environment sets it, or forced to Haswell, or to SkylakeX on a CPU with AVX-512; AdamW:
     for-loop or foreach). --quick uses the first: OpenBLAS's own detection, as a user's machine
     without OPENBLAS_CORETYPE has it (this project's machines set OPENBLAS_CORETYPE=Haswell).
  3. Trains each configuration (small: 4 layers, 4 heads, 128 wide, block 64, batch 12; mid: 6,
     6, 384, block 256, batch 16) with potop and with PyTorch, alternating, each measurement in a
     fresh process (so peak RSS is its own), on the same tokens (the Potop corpus when
     ../shared/data/potop.txt exists, else random ids over a 96-character vocabulary). Each
     process reports the median ms/step after warm-up; each cell of the table is the median over
     rounds, and "±" is the spread (max - min) over rounds relative to it. A round measures potop
     and PyTorch back to back, so its ratio compares them under the same machine conditions; the
     ratios and targets are the median over rounds of these paired ratios, which this VM's drift
     in speed (10-30% over minutes) moves much less than a ratio of two separate medians.
  4. Generates 500 tokens at batch 1 from a mid-sized model (6, 6, 384, block 512), with and
     without a KV cache, potop and PyTorch alternating, and puts the cached decode next to the
     memory-bandwidth bound (`potop_bench bandwidth`: a STREAM-like read of 512 MiB, measured in
     this run; a token reads every weight and the cached keys and values at least once).
Then prints the tables, the potop/PyTorch ratios and the issue's targets, and writes all raw
results to --json.

Model FLOPs per trained token = 6·N + 12·L·T·C (N: parameters without the position table; the
attention term counts the full T×T square, the usual convention). % of peak = model FLOP/s over
the FMA peak measured at the same thread count in this run. % GEMM = model FLOP/s over the GEMM
ceiling: what BLAS alone does on the model's linear-layer shapes (forward, input- and
weight-gradient products of each layer and the LM head, `potop_bench gemm`), at the same thread
count and rows per thread, measured in this run; the distance to 100% is the time spent
outside GEMM (attention, LayerNorm, activations, the optimizer, overheads).
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PYTHON = "/usr/bin/python3"  # Debian's, with torch

CONFIGS = {
    "small": {"n_layer": 4, "n_head": 4, "n_embd": 128, "block": 64, "batch": 12},
    "mid": {"n_layer": 6, "n_head": 6, "n_embd": 384, "block": 256, "batch": 16},
}
GENERATE = {"n_layer": 6, "n_head": 6, "n_embd": 384, "block": 512}
# PyTorch set-ups tried: (environment, extra flags); None removes the variable from the environment.
AS_DETECTED = {"OPENBLAS_CORETYPE": None}
TORCH_VARIANTS = [(AS_DETECTED, []), (AS_DETECTED, ["--foreach"]), ({}, ["--foreach"]),
                  ({"OPENBLAS_CORETYPE": "Haswell"}, ["--foreach"])]
if "avx512f" in open("/proc/cpuinfo").read():
    TORCH_VARIANTS.append(({"OPENBLAS_CORETYPE": "SkylakeX"}, ["--foreach"]))


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cpu_busy(seconds: float = 1.0) -> float:
    """Fraction of all CPUs busy over the next `seconds` (while this script itself sleeps)."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]  # total, idle + iowait
    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


QUIET = {"max_busy": 1.0, "timeout": 0.0, "waited": 0.0, "busy": []}


def wait_quiet() -> None:
    """With --max-busy: wait (up to --quiet-timeout seconds) until other processes use at most
    that fraction of the CPUs, so that each measurement starts on an idle machine."""
    if QUIET["max_busy"] >= 1.0:
        return
    start = time.time()
    while True:
        busy = cpu_busy()
        if busy <= QUIET["max_busy"] or time.time() - start > QUIET["timeout"]:
            QUIET["busy"].append(busy)
            QUIET["waited"] += time.time() - start
            return
        time.sleep(4)


def run_json(cmd: list[str], env: dict | None = None) -> dict:
    full_env = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            full_env.pop(name, None)
        else:
            full_env[name] = value
    wait_quiet()
    out = subprocess.run(cmd, capture_output=True, text=True, env=full_env)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def model_flags(cfg: dict) -> list[str]:
    flags = ["--n-layer", str(cfg["n_layer"]), "--n-head", str(cfg["n_head"]), "--n-embd", str(cfg["n_embd"]),
             "--block", str(cfg["block"])]
    if "batch" in cfg:
        flags += ["--batch", str(cfg["batch"])]
    return flags


def write_tokens(path: str) -> str:
    corpus = os.path.join(ROOT, "..", "shared", "data", "potop.txt")
    if os.path.exists(corpus):
        text = open(corpus, encoding="utf-8").read()
        vocab = {ch: i for i, ch in enumerate(sorted(set(text)))}
        np.array([vocab[ch] for ch in text], dtype=np.int32).tofile(path)
        return f"{os.path.normpath(corpus)} ({len(text)} characters, vocabulary {len(vocab)})"
    np.random.default_rng(7).integers(0, 96, size=1 << 20, dtype=np.int32).tofile(path)
    return "random ids (no ../shared/data/potop.txt), vocabulary 96"


def paired_ratio(cell: dict) -> tuple[float, list[float]]:
    """potop / PyTorch tokens/s of each round (two measurements back to back) and their median."""
    per_round = [p["tokens_per_s"] / q["tokens_per_s"] for p, q in zip(cell["potop"], cell["pytorch"])]
    return statistics.median(per_round), per_round


def spread(values: list[float]) -> float:
    m = statistics.median(values)
    return (max(values) - min(values)) / m if m else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "release", "bench", "potop_bench"))
    ap.add_argument("--rounds", type=int, default=5, help="alternating measurements per cell")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--configs", default="small,mid")
    ap.add_argument("--steps", type=int, default=0, help="timed steps per process (default: by config)")
    ap.add_argument("--no-generate", action="store_true")
    ap.add_argument("--no-train", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="one round, fewer steps, no PyTorch tuning, no generation without a KV cache")
    ap.add_argument("--max-busy", type=float, default=0.1,
                    help="before each measurement, wait until other processes use at most this fraction of the CPUs "
                         "(1 = never wait)")
    ap.add_argument("--quiet-timeout", type=float, default=300, help="longest wait for a quiet machine, seconds")
    ap.add_argument("--json", default=os.path.join(tempfile.gettempdir(), "potop-bench.json"))
    args = ap.parse_args()
    QUIET["max_busy"], QUIET["timeout"] = args.max_busy, args.quiet_timeout
    if args.quick:
        args.rounds = 1
    threads = [int(t) for t in args.threads.split(",")]
    configs = args.configs.split(",")
    torch_bench = [PYTHON, os.path.join(HERE, "torch_bench.py")]
    if not os.path.exists(args.bench):
        log(f"run.py: {args.bench} not found; build it first (bash bench/run.sh does)")
        return 2

    tmp = tempfile.mkdtemp(prefix="potop-bench-")
    atexit.register(shutil.rmtree, tmp, True)  # the 10 MB token file is the run's alone
    tokens = os.path.join(tmp, "tokens.i32")
    data_note = write_tokens(tokens)
    results: dict = {"data": data_note, "peak": {}, "train": {}, "generate": {}, "torch_setup": {}}
    load = os.getloadavg()[0]
    log(f"data: {data_note}; load average {load:.2f}")

    def peak(t: int) -> None:
        r = run_json([args.bench, "peak", "--threads", str(t)])
        results["peak"].setdefault(str(t), []).append(r["gflops"])
        results["peak_isa"] = r["isa"]
        results.setdefault("peak_clock", {}).setdefault(str(t), []).append(
            {"ghz": r["ghz"], "flops_per_cycle": r["flops_per_cycle"]})

    for t in threads:
        peak(t)

    def bandwidth(t: int) -> None:
        r = run_json([args.bench, "bandwidth", "--threads", str(t)])
        results.setdefault("bandwidth_gbs", {}).setdefault(str(t), []).append(r["gbs"])

    if not args.no_generate:
        for t in threads:
            bandwidth(t)

    def steps_for(name: str) -> tuple[int, int]:
        if args.steps:
            return args.steps, 2
        if args.quick:
            return (20, 3) if name == "small" else (3, 1)
        return (50, 5) if name == "small" else (6, 2)

    # ---- training
    if not args.no_train:
        for name in configs:
            cfg = CONFIGS[name]
            steps, warmup = steps_for(name)
            common = model_flags(cfg) + ["--tokens", tokens, "--steps", str(steps), "--warmup", str(warmup)]
            for t in threads:
                key = f"{name}/{t}"
                # PyTorch's best set-up for this cell, from a short trial of each variant.
                env, extra = TORCH_VARIANTS[0]
                if not args.quick:
                    trial = model_flags(cfg) + ["--tokens", tokens, "--threads", str(t),
                                                "--steps", str(max(2, steps // 5)), "--warmup", "1"]
                    timings = []
                    for venv, vextra in TORCH_VARIANTS:
                        r = run_json(torch_bench + ["train"] + trial + vextra, venv)
                        timings.append((r["ms_per_step"], venv, vextra))
                    _, env, extra = min(timings, key=lambda x: x[0])
                    results["torch_setup"][key] = [{"env": e, "flags": f, "ms_per_step": ms} for ms, e, f in timings]
                cell = {"potop": [], "pytorch": [], "torch_env": env, "torch_flags": extra}
                # The GEMM ceiling: BLAS alone on this model's linear-layer shapes, same threads.
                cell["gemm_ceiling_gflops"] = run_json([args.bench, "gemm", "--threads", str(t)] + common)["gflops"]
                for rnd in range(args.rounds):
                    order = ["potop", "pytorch"] if rnd % 2 == 0 else ["pytorch", "potop"]
                    for impl in order:
                        if impl == "potop":
                            r = run_json([args.bench, "train", "--threads", str(t)] + common)
                        else:
                            r = run_json(torch_bench + ["train", "--threads", str(t)] + common + extra, env)
                        cell[impl].append(r)
                        log(f"train {key:8s} {impl:7s} {r['ms_per_step']:9.2f} ms/step {r['tokens_per_s']:9.1f} tok/s "
                            f"{r['peak_rss_mib']:7.1f} MiB")
                results["train"][key] = cell

    # ---- generation
    if not args.no_generate:
        gen_threads = [t for t in threads if t == max(threads)] if args.quick else threads
        for t in gen_threads:
            # --quick leaves out generation without a cache: ~3 of its minutes, and it has no target.
            for kv in (True,) if args.quick else (True, False):
                key = f"{t}/{'kv' if kv else 'nokv'}"
                cell = {"potop": [], "pytorch": []}
                rounds = args.rounds if kv else 1  # without a cache PyTorch takes ~a minute
                for rnd in range(rounds):
                    flags = model_flags(GENERATE) + ["--tokens", tokens, "--threads", str(t), "--new-tokens", "500"]
                    if not kv:
                        flags.append("--no-kv-cache")
                    order = ["potop", "pytorch"] if rnd % 2 == 0 else ["pytorch", "potop"]
                    for impl in order:
                        cmd = [args.bench, "generate"] if impl == "potop" else torch_bench + ["generate"]
                        r = run_json(cmd + flags)
                        cell[impl].append(r)
                        log(f"generate {key:8s} {impl:7s} {r['tokens_per_s']:8.1f} tok/s")
                results["generate"][key] = cell

    for t in threads:
        peak(t)
        if not args.no_generate:
            bandwidth(t)
    results["load_average_end"] = os.getloadavg()[0]
    results["load_average_start"] = load
    results["quiet"] = {"max_busy": QUIET["max_busy"], "waited_s": QUIET["waited"], "busy_before_each": QUIET["busy"]}
    with open(args.json, "w") as f:
        json.dump(results, f, indent=1)
    report(results, threads)
    log(f"raw results: {args.json}")
    return 0


def report(results: dict, threads: list[int]) -> None:
    peak = {int(t): max(v) for t, v in results["peak"].items()}
    print(f"data: {results['data']}")
    print(f"FMA peak measured in this run with {results.get('peak_isa', 'avx2')} FMA: " + ", ".join(
        f"{t} thread{'s' if t > 1 else ''} {peak[t]:.1f} GFLOP/s" for t in sorted(peak)))
    clock = results.get("peak_clock", {})
    if clock:  # the run with the best GFLOP/s at each thread count
        def best_clock(t: int) -> dict:
            runs = clock[str(t)]
            return runs[max(range(len(runs)), key=lambda i: results["peak"][str(t)][i])]
        print("  per core: " + ", ".join(
            f"{t} thread{'s' if t > 1 else ''} {best_clock(t)['flops_per_cycle']:.1f} FLOP/cycle at "
            f"{best_clock(t)['ghz']:.2f} GHz" for t in sorted(peak)))
    print(f"load average: {results['load_average_start']:.2f} at start, {results['load_average_end']:.2f} at end")
    q = results.get("quiet")
    if q and q["busy_before_each"]:
        b = q["busy_before_each"]
        print(f"other processes' CPU use just before each measurement: median {100 * statistics.median(b):.0f}%, "
              f"max {100 * max(b):.0f}% (waited {q['waited_s']:.0f} s for quiet)")
    targets = []
    if results["train"]:
        print()
        print("Training (median over rounds; ± = spread over rounds)")
        hdr = (f"{'config':7s} {'thr':>3s} {'impl':8s} {'ms/step':>14s} {'tokens/s':>10s} {'GFLOP/s':>8s} "
               f"{'% peak':>7s} {'% GEMM':>7s} {'peak RSS':>10s}")
        print(hdr)
        print("-" * len(hdr))
        ratios = {}
        for key, cell in results["train"].items():
            name, t = key.split("/")
            t = int(t)
            row = {}
            for impl in ("potop", "pytorch"):
                rs = cell[impl]
                ms = statistics.median(r["ms_per_step"] for r in rs)
                tps = statistics.median(r["tokens_per_s"] for r in rs)
                rss = max(r["peak_rss_mib"] for r in rs)
                gf = tps * rs[0]["flops_per_token"] / 1e9
                row[impl] = (tps, rss)
                sp = spread([r["tokens_per_s"] for r in rs])
                ceiling = cell.get("gemm_ceiling_gflops")
                of_gemm = f"{100 * gf / ceiling:6.1f}%" if ceiling else f"{'-':>7s}"
                print(f"{name:7s} {t:3d} {impl:8s} {ms:9.2f} ±{100 * sp:2.0f}% {tps:10.1f} {gf:8.1f} "
                      f"{100 * gf / peak[t]:6.1f}% {of_gemm} {rss:7.1f} MiB")
            gf_potop = row["potop"][0] * cell["potop"][0]["flops_per_token"] / 1e9
            ratio, per_round = paired_ratio(cell)
            # (tokens/s ratio, RSS ratio, potop's share of peak, each round's tokens/s ratio)
            ratios[key] = (ratio, row["potop"][1] / row["pytorch"][1], gf_potop / peak[t], per_round)
        print()
        print("potop / PyTorch tokens/s, median of the rounds' paired ratios (each round's in brackets); peak RSS")
        for k, r in ratios.items():
            rounds = ", ".join(f"{x:.2f}" for x in r[3])
            print(f"  {k:8s} {r[0]:.2f}x tokens/s [{rounds}]   {r[1]:.2f}x RSS")
        t2 = max(threads)
        if f"mid/{t2}" in ratios:
            r = ratios[f"mid/{t2}"]
            targets.append((f"training mid, {t2} threads: >= 1.5x PyTorch tokens/s", r[0] >= 1.5, f"{r[0]:.2f}x"))
            targets.append((f"training mid, {t2} threads: >= 60% of the FMA peak", r[2] >= 0.6, f"{100 * r[2]:.1f}%"))
            targets.append((f"training mid, {t2} threads: peak RSS <= 0.5x PyTorch's", r[1] <= 0.5, f"{r[1]:.2f}x"))
        small = [k for k in ratios if k.startswith("small/")]
        if small:
            # PyTorch at its best thread count against potop at the same count (at its own best
            # count potop could only do better), paired round by round.
            best_torch = max(small, key=lambda k: statistics.median(
                r["tokens_per_s"] for r in results["train"][k]["pytorch"]))
            ratio = ratios[best_torch][0]
            targets.append((f"training small: >= 2x PyTorch at its best thread count ({best_torch.split('/')[1]})",
                            ratio >= 2.0, f"{ratio:.2f}x"))
    if results["generate"]:
        print()
        print("Generation: 500 new tokens at batch 1, mid-sized model (6 layers, 384 wide, block 512)")
        hdr = (f"{'thr':>3s} {'KV cache':8s} {'potop tok/s':>14s} {'PyTorch tok/s':>16s} {'ratio':>6s} {'% bw':>6s}"
               "  (paired ratio per round)")
        print(hdr)
        print("-" * len(hdr))
        for key, cell in results["generate"].items():
            t, kv = key.split("/")
            p = statistics.median(r["tokens_per_s"] for r in cell["potop"])
            q = statistics.median(r["tokens_per_s"] for r in cell["pytorch"])
            sp = spread([r["tokens_per_s"] for r in cell["potop"]])
            ratio, per_round = paired_ratio(cell)
            rounds = ", ".join(f"{x:.2f}" for x in per_round)
            # % bw: potop's tokens/s over the memory-bandwidth bound, the read bandwidth measured in
            # this run (best at this thread count) over the bytes a token reads at least (weights,
            # and the cache's keys and values). Only meaningful with the cache: without it a token
            # recomputes the whole context and is compute-bound.
            gbs = max(results.get("bandwidth_gbs", {}).get(t, [0]))
            bw = ""
            if kv == "kv" and gbs > 0:
                r0 = cell["potop"][0]
                bound = gbs * 1e9 / (r0["weight_bytes"] + r0["cache_bytes_per_token"])
                bw = f"{100 * p / bound:5.0f}%"
            print(f"{int(t):3d} {'yes' if kv == 'kv' else 'no':8s} {p:9.1f} ±{100 * sp:2.0f}% {q:16.1f} {ratio:5.2f}x"
                  f" {bw:>6s}  [{rounds}]")
            if kv == "kv" and int(t) == max(threads):
                targets.append((f"generation mid, batch 1, KV cache, {t} threads: >= 3x PyTorch", ratio >= 3.0,
                                f"{ratio:.2f}x"))
    if results.get("bandwidth_gbs"):
        print("% bw: tokens/s over the memory-bandwidth bound, read bandwidth measured in this run: " + ", ".join(
            f"{t} thread{'s' if int(t) > 1 else ''} {max(v):.1f} GB/s" for t, v in sorted(results["bandwidth_gbs"].items()))
            + "; bytes per token: every weight once plus the cached keys and values (over 100% where the weights"
            " stay in cache)")
    if targets:
        print()
        print("Targets")
        for what, ok, value in targets:
            print(f"  [{'met' if ok else 'MISSED'}] {what}: {value}")


if __name__ == "__main__":
    sys.exit(main())
