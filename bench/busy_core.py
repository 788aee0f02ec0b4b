#!/usr/bin/python3
"""potop on a machine where another process holds a core (docs/performance.md, "One core busy").

OpenMP threads that finish their share of a parallel region early spin before they sleep. libgomp
spins for 300,000 pauses by default (milliseconds); potop starts itself with a short spin
(GOMP_SPINCOUNT, core/threads.h) unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT. With a core
held by another process, a spinning thread keeps the core its straggling partner needs, and every
barrier waits for a time slice.

For each condition (the machine quiet; one core held by a spinning process) this runs, in one
process each:
  - `potop sample` of the README's demo-sized model (4 layers, 128 wide): tokens/s, its own figure;
  - a short `potop train` of the same model: tokens/s over the process's wall time;
with every core under libgomp's default spin ("before": GOMP_SPINCOUNT=300000, what potop did
until it bounded the spin and ran a small model's sampling on one thread), with potop's defaults
("after": nothing set), with every core under potop's spin, and with --threads 1, and prints
after/before. The
FMA peak of one thread (potop_bench peak) is measured in the same run, as every speed figure is.

  /usr/bin/python3 bench/busy_core.py --potop build/release/src/potop --bench build/release/bench/potop_bench
  (or: bash bench/run.sh busy [--quick] [--also-spin 1000,30000])
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from machine import cpu_name

LIBGOMP_DEFAULT = "300000"  # libgomp's spin count when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set
BEFORE, AFTER = "before: all cores, libgomp's", "after: potop's defaults"
MODEL = ["--n-layer", "4", "--n-head", "4", "--n-embd", "128", "--block-size", "64"]
BATCH = 12


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def env_with(spin: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    if spin is not None:
        env["GOMP_SPINCOUNT"] = spin
    return env


def corpus(tmp: str) -> str:
    shared = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "potop.txt")
    if os.path.isfile(shared):
        return shared
    path = os.path.join(tmp, "corpus.txt")
    with open(path, "w") as f:
        for i in range(20000):
            f.write(f"Kmicic ruszył z kopyta, a pan Zagłoba zawołał: mości panowie, {i}!\n")
    return path


def sample_rate(potop: str, model: str, tokens: int, threads: list[str], env: dict) -> float:
    out = subprocess.run([potop, "sample", "-m", model, "-p", "Pan ", "-n", str(tokens), "--temperature", "0.8",
                          "--seed", "1", *threads], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"potop sample failed: {out.stderr[-1000:]}")
    m = re.search(r"sample: \d+ tokens in [\d.]+ s, (\d+) tokens/s", out.stderr)
    if not m:
        raise RuntimeError(f"no rate in potop sample's output: {out.stderr[-500:]}")
    return float(m.group(1))


def train_rate(potop: str, data: str, out_dir: str, steps: int, threads: list[str], env: dict) -> float:
    start = time.perf_counter()
    out = subprocess.run([potop, "train", "--data", data, "--out", out_dir, "--force", "--steps", str(steps),
                          "--batch-size", str(BATCH), "--eval-interval", "1000000", "--eval-iters", "1",
                          "--log-interval", "1000000", "--lr", "1e-3", "--dropout", "0", *MODEL, *threads],
                         capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"potop train failed: {out.stderr[-1000:]}")
    return steps * BATCH * 64 / seconds


class Spinner:
    """Another process holding one core: a busy loop, for as long as the `with` lasts."""

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--potop", required=True)
    ap.add_argument("--bench", required=True, help="potop_bench, for the FMA peak")
    ap.add_argument("--quick", action="store_true", help="fewer tokens, steps and rounds")
    ap.add_argument("--rounds", type=int, default=0, help="runs per cell, the median is kept (default 3, --quick 1)")
    ap.add_argument("--also-spin", default="", help="more GOMP_SPINCOUNT values to measure, comma-separated")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    tokens, steps = (300, 15) if args.quick else (1000, 40)

    peak = json.loads(subprocess.run([args.bench, "peak", "--threads", "1"], capture_output=True, text=True,
                                     check=True).stdout.strip().splitlines()[-1])
    log(f"CPU: {cpu_name()}, {os.cpu_count()} CPUs; FMA peak of one thread {peak['gflops']:.1f} GFLOP/s "
        f"({peak['isa']}); load average {os.getloadavg()[0]:.2f}")

    # "before" is what potop did until it bounded the spin and sized sampling threads to the model:
    # every core, libgomp's spin. "after" is potop's defaults as they are.
    cores = ["--threads", str(len(os.sched_getaffinity(0)))]
    modes = [(BEFORE, cores, env_with(LIBGOMP_DEFAULT)), (AFTER, [], env_with(None)),
             ("all cores, potop's spin", cores, env_with(None)), ("--threads 1", ["--threads", "1"], env_with(None))]
    for spin in filter(None, args.also_spin.split(",")):
        modes.append((f"all cores, GOMP_SPINCOUNT={spin}", cores, env_with(spin)))

    results: dict = {"cpu": cpu_name(), "fma_peak_gflops_1_thread": peak["gflops"], "cells": {}}
    with tempfile.TemporaryDirectory(prefix="potop-busy-") as tmp:
        data = corpus(tmp)
        model = os.path.join(tmp, "model")
        log("training the model to sample from (50 steps) ...")
        train_rate(args.potop, data, model, 50, [], env_with(None))
        for condition in ("quiet", "one core busy"):
            for name, threads, env in modes:
                def measure():
                    s = statistics.median(sample_rate(args.potop, model, tokens, threads, env) for _ in range(rounds))
                    t = statistics.median(train_rate(args.potop, data, os.path.join(tmp, "run"), steps, threads, env)
                                          for _ in range(rounds))
                    return s, t
                if condition == "quiet":
                    s, t = measure()
                else:
                    with Spinner():
                        s, t = measure()
                results["cells"].setdefault(condition, {})[name] = {"sample_tok_s": s, "train_tok_s": t}
                log(f"{condition:>14} | {name:<33} | sample {s:8.0f} tok/s | train {t:8.0f} tok/s")

    print(f"\n{'':14} | {'':33} | {'sample tok/s':>12} | {'train tok/s':>11}")
    for condition, cells in results["cells"].items():
        for name, c in cells.items():
            print(f"{condition:>14} | {name:<33} | {c['sample_tok_s']:12.0f} | {c['train_tok_s']:11.0f}")
        before, after = cells[BEFORE], cells[AFTER]
        print(f"{condition:>14} | {'after / before':<33} | {after['sample_tok_s'] / before['sample_tok_s']:11.2f}x | "
              f"{after['train_tok_s'] / before['train_tok_s']:10.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
