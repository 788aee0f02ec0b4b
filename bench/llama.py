"""The Llama-style decoder (`potop train --arch llama`): vs PyTorch, vs the GPT, and generating.

    bash bench/run.sh llama [--quick]
    /usr/bin/python3 bench/llama.py --potop build/release/src/potop --bench build/release/bench/potop_bench \\
        [--quick] [--parts throughput,budget,generate] [--rounds 3] [--budget 60] [--seeds 1,2,3]

Three measurements in one run, each printed as a table; all raw results go to --json:

  1. throughput: training tokens/s of potop (`potop train --arch llama`) against PyTorch
     (bench/torch_bench.py train-llama: scripts/torch_llama.py's Llama, the same architecture,
     parameter names and initialisation, trained with zero_grad, forward, backward, clip to norm 1,
     AdamW), on the same characters of the Potop corpus, at each thread count, alternating in each
     round. Configurations: small (4 layers, 4 heads, 128 wide, block 64, batch 12), mid (6 layers,
     6 heads, 384 wide, block 256, batch 8) and mid-gqa (mid with 2 key/value heads). potop's
     ms/step is the median of the steps after warm-up, from its metrics.jsonl (one record a step,
     the step's own time: no evaluation, no start-up); PyTorch's the same from its process. A
     round's ratio is potop/PyTorch tokens/s of its two back-to-back measurements; the table gives
     the median of those paired ratios, and % of the FMA peak measured in this run (`potop_bench
     peak`). Model FLOPs per token: 6·N + 12·L·T·C (N: every parameter; the Llama has no position
     table). PyTorch gets its best set-up as in bench/run.py (OpenBLAS core type, AdamW for-loop or
     foreach), from a short trial on `mid` per thread count (not with --quick).
  2. budget: a GPT-2-style and a Llama-style model of about the same parameter count (the same
     layers, heads and width; GELU MLP of 4C with biases and learned positions vs SwiGLU of 8/3·C,
     RoPE, RMSNorm, no biases; both with tied embeddings) trained for the same wall-clock budget,
     on the Potop corpus with the character tokenizer and with a BPE tokenizer trained by `potop
     tokenizer train` on it. A short calibration run of each (alternating) gives its ms/step; the
     steps of each run are the budget over that. Same lr, warm-up, batch, seed set, evaluation
     (--evals evaluations of --eval-iters batches on the same validation split). The table gives
     the best validation loss, mean and range over the seeds, each arch's training tokens/s and
     the seconds its steps took, and the Llama's loss minus the GPT's, seed by seed.
  3. generate: `potop sample` at batch 1 (500 tokens, greedy, KV cache) from untrained (1-step)
     Llamas of 6 layers, 384 wide, 8 heads, block 512, with 8 key/value heads and with 2, and a
     GPT of the same shape for reference; tokens/s alternating in each round, the KV cache's
     bytes per token (`potop info --json`), peak RSS.

Before each measurement it waits (bounded by --quiet-timeout and, in all, --quiet-total) for the
other processes to use at most --max-busy of the CPUs, and prints how busy the machine was.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run as runbench  # noqa: E402  (bench/run.py: peak, the quiet wait, the token file, PyTorch set-ups)
from machine import cpu_name  # noqa: E402

PYTHON = "/usr/bin/python3"
CORPUS = os.path.normpath(os.path.join(ROOT, "..", "shared", "data", "potop.txt"))
TIMEOUT = 1800  # seconds: no child of this benchmark should take longer

# Training throughput, potop vs PyTorch: (timed steps, warm-up steps) full / --quick.
THROUGHPUT = {
    "small": {"n_layer": 4, "n_head": 4, "n_kv_head": 4, "n_embd": 128, "block": 64, "batch": 12,
              "steps": (40, 5), "quick": (15, 3)},
    "mid": {"n_layer": 6, "n_head": 6, "n_kv_head": 6, "n_embd": 384, "block": 256, "batch": 8,
            "steps": (8, 2), "quick": (3, 1)},
    "mid-gqa": {"n_layer": 6, "n_head": 6, "n_kv_head": 2, "n_embd": 384, "block": 256, "batch": 8,
                "steps": (8, 2), "quick": (3, 1)},
}
GENERATE = {"n_layer": 6, "n_head": 8, "n_embd": 384, "block": 512}
GEN_MODELS = [("llama", 8), ("llama", 2), ("gpt", 8)]  # (arch, key/value heads)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def bound_quiet(a) -> None:
    """Bounds the next wait for a quiet machine (runbench.run_json waits) by what is left of
    --quiet-total: once that is spent, each wait samples the CPU use once and goes on."""
    left = max(0.0, a.quiet_total - runbench.QUIET["waited"])
    runbench.QUIET["timeout"] = min(a.quiet_timeout, left)


def quiet(a) -> None:
    bound_quiet(a)
    runbench.wait_quiet()


def run_cmd(cmd: list[str], tmp: str) -> tuple[str, float]:
    """(stdout, peak RSS in MiB) of one child, measured by /usr/bin/time (not wait4: a child of
    Python inherits Python's high-water mark across exec)."""
    rss_file = os.path.join(tmp, "rss")
    time_cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_file] if os.path.exists("/usr/bin/time") else []
    with open(os.path.join(tmp, "out"), "w+") as out, open(os.path.join(tmp, "err"), "w+") as err:
        proc = subprocess.run(time_cmd + cmd, stdout=out, stderr=err, text=True, timeout=TIMEOUT)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr[-2000:]}")
    rss = float("nan")
    if time_cmd:
        with open(rss_file) as f:
            rss = int(f.read().split()[-1]) / 1024.0
    return stdout, rss


def last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def step_seconds(out_dir: str, tokens_per_step: int) -> list[float]:
    """Each step's own time, from the run's metrics.jsonl written with --log-interval 1."""
    times = []
    with open(os.path.join(out_dir, "metrics.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("kind") == "train" and r.get("tokens_per_s"):
                times.append(tokens_per_step / r["tokens_per_s"])
    return times


def info(a, model_dir: str, tmp: str) -> dict:
    stdout, _ = run_cmd([a.potop, "info", "-m", model_dir, "--json"], tmp)
    return json.loads(stdout)


def potop_train(a, tmp: str, out: str, flags: list[str], tokens_per_step: int) -> dict:
    """One `potop train --json` run into a fresh `out`, with each step's time."""
    shutil.rmtree(out, ignore_errors=True)
    quiet(a)
    t0 = time.time()
    stdout, rss = run_cmd([a.potop, "train", "--out", out, "--log-interval", "1", "--json"] + flags, tmp)
    r = last_json(stdout)
    r["process_s"] = time.time() - t0
    r["step_s"] = step_seconds(out, tokens_per_step)
    r["peak_rss_mib"] = rss
    return r


def model_flags(cfg: dict, arch: str) -> list[str]:
    f = ["--n-layer", str(cfg["n_layer"]), "--n-head", str(cfg["n_head"]), "--n-embd", str(cfg["n_embd"]),
         "--block-size", str(cfg["block"])]
    if arch == "llama":
        f = ["--arch", "llama"] + f + ["--n-kv-head", str(cfg.get("n_kv_head", cfg["n_head"]))]
    return f


def spread(values: list[float]) -> float:
    m = statistics.median(values)
    return (max(values) - min(values)) / m if m else 0.0


def peak(a, results: dict, threads: list[int]) -> None:
    for t in threads:
        bound_quiet(a)
        r = runbench.run_json([a.bench, "peak", "--threads", str(t)])
        results["peak"].setdefault(str(t), []).append(r["gflops"])
        results["peak_isa"] = r["isa"]


# ---------------------------------------------------------------- 1. throughput vs PyTorch


def throughput(a, tmp: str, threads: list[int], results: dict) -> None:
    tokens = os.path.join(tmp, "tokens.i32")
    results["throughput_data"] = runbench.write_tokens(tokens)
    torch_bench = [PYTHON, os.path.join(HERE, "torch_bench.py"), "train-llama"]
    cells = {}
    setups = {}
    for t in threads:
        env, extra = runbench.TORCH_VARIANTS[0]
        if not a.quick and not a.no_torch_trial:
            cfg = THROUGHPUT["mid"]
            trial = ["--n-layer", str(cfg["n_layer"]), "--n-head", str(cfg["n_head"]), "--n-kv-head",
                     str(cfg["n_kv_head"]), "--n-embd", str(cfg["n_embd"]), "--block", str(cfg["block"]),
                     "--batch", str(cfg["batch"]), "--tokens", tokens, "--threads", str(t), "--steps", "1",
                     "--warmup", "1"]
            timings = []
            for venv, vextra in runbench.TORCH_VARIANTS:
                bound_quiet(a)
                r = runbench.run_json(torch_bench + trial + vextra, venv)
                timings.append((r["ms_per_step"], venv, vextra))
                log(f"PyTorch set-up trial, mid, {t} thread(s), {venv} {vextra}: {r['ms_per_step']:.0f} ms/step")
            _, env, extra = min(timings, key=lambda x: x[0])
            results.setdefault("torch_trial", {})[str(t)] = [{"env": e, "flags": f, "ms_per_step": ms}
                                                             for ms, e, f in timings]
        setups[t] = (env, extra)
    for rnd in range(a.rounds):
        for name in a.configs.split(","):
            cfg = THROUGHPUT[name]
            steps, warmup = cfg["quick"] if a.quick else cfg["steps"]
            B, T = cfg["batch"], cfg["block"]
            for t in threads:
                key = f"{name}/{t}"
                cell = cells.setdefault(key, {"potop": [], "pytorch": [], "torch_setup": setups[t]})
                order = ["potop", "pytorch"] if rnd % 2 == 0 else ["pytorch", "potop"]
                for impl in order:
                    if impl == "potop":
                        out = os.path.join(tmp, "throughput")
                        flags = model_flags(cfg, "llama") + [
                            "--data", CORPUS, "--batch-size", str(B), "--steps", str(steps + warmup),
                            "--threads", str(t), "--eval-interval", "1000000", "--eval-iters", "1"]
                        r = potop_train(a, tmp, out, flags, B * T)
                        if "params" not in cell:
                            cell["params"] = info(a, out, tmp)["parameters"]
                        timed = r["step_s"][warmup:]
                        ms = 1e3 * statistics.median(timed)
                        m = {"ms_per_step": ms, "tokens_per_s": B * T / (ms / 1e3),
                             "json_tokens_per_s": r["tokens_per_s"], "peak_rss_mib": r["peak_rss_mib"],
                             "steps_ms": [1e3 * s for s in r["step_s"]]}
                    else:
                        env, extra = setups[t]
                        bound_quiet(a)
                        m = runbench.run_json(torch_bench + [
                            "--n-layer", str(cfg["n_layer"]), "--n-head", str(cfg["n_head"]), "--n-kv-head",
                            str(cfg["n_kv_head"]), "--n-embd", str(cfg["n_embd"]), "--block", str(T), "--batch", str(B),
                            "--tokens", tokens, "--threads", str(t), "--steps", str(steps), "--warmup", str(warmup)]
                            + extra, env)
                        cell["torch_params"] = m["params"]
                    cell[impl].append(m)
                    log(f"throughput round {rnd + 1}/{a.rounds} {key:10s} {impl:7s} {m['ms_per_step']:9.1f} ms/step "
                        f"{m['tokens_per_s']:9.1f} tok/s {m['peak_rss_mib']:7.1f} MiB")
    for key, cell in cells.items():
        name = key.split("/")[0]
        cfg = THROUGHPUT[name]
        cell["flops_per_token"] = 6.0 * cell["params"] + 12.0 * cfg["n_layer"] * cfg["block"] * cfg["n_embd"]
    results["throughput"] = cells


def report_throughput(results: dict, peak: dict) -> list:
    cells = results["throughput"]
    print()
    print(f"1. Training throughput, potop train --arch llama vs PyTorch (torch_llama.Llama), data: "
          f"{results['throughput_data']}")
    print("   small: 4 layers, 4 heads, 128 wide, block 64, batch 12; mid: 6 layers, 6 heads, 384 wide, block 256, "
          "batch 8; mid-gqa: mid with 2 key/value heads")
    hdr = (f"{'config':8s} {'thr':>3s} {'impl':8s} {'params':>9s} {'ms/step':>14s} {'tokens/s':>9s} {'GFLOP/s':>8s} "
           f"{'% peak':>7s} {'peak RSS':>10s}")
    print(hdr)
    print("-" * len(hdr))
    ratios = {}
    for key, cell in cells.items():
        name, t = key.split("/")
        t = int(t)
        for impl in ("potop", "pytorch"):
            rs = cell[impl]
            ms = statistics.median(r["ms_per_step"] for r in rs)
            tps = statistics.median(r["tokens_per_s"] for r in rs)
            gf = tps * cell["flops_per_token"] / 1e9
            rss = max(r["peak_rss_mib"] for r in rs)
            params = cell["params"] if impl == "potop" else cell.get("torch_params", 0)
            print(f"{name:8s} {t:3d} {impl:8s} {params:9d} {ms:9.1f} ±{100 * spread([r['tokens_per_s'] for r in rs]):2.0f}% "
                  f"{tps:9.1f} {gf:8.1f} {100 * gf / peak[t]:6.1f}% {rss:7.1f} MiB")
        per_round = [p["tokens_per_s"] / q["tokens_per_s"] for p, q in zip(cell["potop"], cell["pytorch"])]
        potop_gf = statistics.median(r["tokens_per_s"] for r in cell["potop"]) * cell["flops_per_token"] / 1e9
        rss_ratio = max(r["peak_rss_mib"] for r in cell["potop"]) / max(r["peak_rss_mib"] for r in cell["pytorch"])
        ratios[key] = (statistics.median(per_round), per_round, potop_gf / peak[t], rss_ratio)
    print()
    print("potop / PyTorch tokens/s, median of the rounds' paired ratios (each round's in brackets); peak RSS")
    for key, (r, per_round, _, rss) in ratios.items():
        print(f"  {key:10s} {r:.2f}x [{', '.join(f'{x:.2f}' for x in per_round)}]   {rss:.2f}x RSS")
    setups = {k.split("/")[1]: c["torch_setup"] for k, c in cells.items()}
    print("PyTorch set-up per thread count (OPENBLAS_CORETYPE, AdamW flags): " + ", ".join(
        f"{t}: {env.get('OPENBLAS_CORETYPE', 'as detected' if 'OPENBLAS_CORETYPE' in env else 'environment')} "
        f"{' '.join(extra) or 'for-loop'}" for t, (env, extra) in sorted(setups.items())))
    targets = []
    t2 = max(int(k.split("/")[1]) for k in ratios)
    for name in ("mid", "mid-gqa"):
        if f"{name}/{t2}" in ratios:
            r = ratios[f"{name}/{t2}"]
            targets.append((f"training {name}, {t2} threads: >= 1.5x PyTorch tokens/s", r[0] >= 1.5, f"{r[0]:.2f}x"))
    return targets


# ---------------------------------------------------------------- 2. equal wall-clock budget, GPT vs Llama


def budget(a, tmp: str, results: dict) -> None:
    L, H, C, T, B = (int(x) for x in a.budget_shape.split(","))
    shape = {"n_layer": L, "n_head": H, "n_embd": C, "block": T, "batch": B}
    bpe = os.path.join(tmp, "bpe")
    quiet(a)
    t0 = time.time()
    run_cmd([a.potop, "tokenizer", "train", "--kind", "bpe", "--vocab-size", str(a.bpe_vocab), "--data", CORPUS,
             "--out", bpe, "--force"], tmp)
    results["bpe_train_s"] = time.time() - t0
    corpora = {"char": [], "bpe": ["--tokenizer", bpe]}
    common = ["--data", CORPUS, "--batch-size", str(B), "--threads", str(a.budget_threads), "--lr", str(a.lr),
              "--warmup", str(a.warmup)]
    out = {"shape": shape, "budget_s": a.budget, "threads": a.budget_threads, "lr": a.lr, "warmup": a.warmup,
           "eval_iters": a.eval_iters, "evals": a.evals, "bpe_vocab": a.bpe_vocab, "corpora": {}}
    for corpus, tok_flags in corpora.items():
        c = {"params": {}, "calibration": {"gpt": [], "llama": []}, "runs": {"gpt": [], "llama": []}}
        # Calibration: ms/step of each arch, alternating.
        for rnd in range(1 if a.quick else 2):
            for arch in (["gpt", "llama"] if rnd % 2 == 0 else ["llama", "gpt"]):
                d = os.path.join(tmp, f"calib-{arch}")
                r = potop_train(a, tmp, d, model_flags(shape, arch) + common + tok_flags + [
                    "--steps", str(a.calib_steps), "--eval-interval", "1000000", "--eval-iters", "1"], B * T)
                ms = 1e3 * statistics.median(r["step_s"][3:])
                c["calibration"][arch].append(ms)
                if arch not in c["params"]:
                    i = info(a, d, tmp)
                    c["params"][arch] = i["parameters"]
                    c["vocab"] = i["tokenizer"]["size"]
                log(f"budget {corpus} calibration {arch:5s} {ms:7.1f} ms/step")
        steps = {arch: max(10, round(a.budget / (statistics.median(v) / 1e3))) for arch, v in c["calibration"].items()}
        c["steps"] = steps
        log(f"budget {corpus}: steps for {a.budget:.0f} s: {steps}")
        for i, seed in enumerate(int(s) for s in a.seeds.split(",")):
            for arch in (["gpt", "llama"] if i % 2 == 0 else ["llama", "gpt"]):
                S = steps[arch]
                d = os.path.join(tmp, f"budget-{arch}")
                r = potop_train(a, tmp, d, model_flags(shape, arch) + common + tok_flags + [
                    "--steps", str(S), "--seed", str(seed), "--eval-interval", str(math.ceil(S / a.evals)),
                    "--eval-iters", str(a.eval_iters)], B * T)
                train_s = sum(r["step_s"])
                run = {"seed": seed, "steps": S, "best_val_loss": r["best_val_loss"],
                       "final_val_loss": r["final_val_loss"], "final_train_loss": r["final_train_loss"],
                       "train_s": train_s, "tokens_per_s": S * B * T / train_s, "json_tokens_per_s": r["tokens_per_s"],
                       "wall_s": r["seconds"], "process_s": r["process_s"], "peak_rss_mib": r["peak_rss_mib"]}
                c["runs"][arch].append(run)
                log(f"budget {corpus} seed {seed} {arch:5s} {S:5d} steps in {train_s:6.1f} s: best val "
                    f"{r['best_val_loss']:.4f}, {run['tokens_per_s']:.0f} tok/s; process {r['process_s']:.1f} s")
        out["corpora"][corpus] = c
    results["budget"] = out


def report_budget(results: dict) -> list:
    b = results["budget"]
    s = b["shape"]
    print()
    print(f"2. Equal training time, GPT-2-style vs Llama-style: {b['budget_s']:.0f} s of steps each, "
          f"{b['threads']} threads; {s['n_layer']} layers, {s['n_head']} heads, {s['n_embd']} wide, block "
          f"{s['block']}, batch {s['batch']}; lr {b['lr']:g}, warm-up {b['warmup']}, cosine to the end; "
          f"{b['evals']} evaluations of {b['eval_iters']} batches (+ step 0)")
    print("   gpt: learned positions, LayerNorm, GELU MLP 4C, biases; llama: RoPE, RMSNorm, SwiGLU 8/3·C, no biases; "
          "both tied embeddings, dropout 0")
    hdr = (f"{'corpus':10s} {'arch':6s} {'params':>9s} {'steps':>6s} {'tokens/s':>9s} {'train s':>8s} "
           f"{'best val loss: mean (min-max)':>30s} {'final val':>10s}")
    print(hdr)
    print("-" * len(hdr))
    targets = []
    for corpus, c in b["corpora"].items():
        for arch in ("gpt", "llama"):
            runs = c["runs"][arch]
            best = [r["best_val_loss"] for r in runs]
            final = [r["final_val_loss"] for r in runs]
            tps = statistics.mean(r["tokens_per_s"] for r in runs)
            ts = statistics.mean(r["train_s"] for r in runs)
            label = f"{corpus} ({c['vocab']})" if arch == "gpt" else ""
            print(f"{label:10s} {arch:6s} {c['params'][arch]:9d} {c['steps'][arch]:6d} {tps:9.0f} {ts:8.1f} "
                  f"{statistics.mean(best):12.4f} ({min(best):.4f}-{max(best):.4f}) {statistics.mean(final):10.4f}")
        diffs = [l["best_val_loss"] - g["best_val_loss"] for g, l in
                 zip(sorted(c["runs"]["gpt"], key=lambda r: r["seed"]), sorted(c["runs"]["llama"], key=lambda r: r["seed"]))]
        pg, pl = c["params"]["gpt"], c["params"]["llama"]
        print(f"{'':10s} llama - gpt, best val loss, seed by seed: {', '.join(f'{d:+.4f}' for d in diffs)}; "
              f"mean {statistics.mean(diffs):+.4f}; parameters llama/gpt {pl / pg:.3f}")
        targets.append((f"equal time, {corpus}: Llama's best val loss below the GPT's (mean over seeds)",
                        statistics.mean(diffs) < 0, f"{statistics.mean(diffs):+.4f}"))
    return targets


# ---------------------------------------------------------------- 3. generation


def generate(a, tmp: str, threads: list[int], results: dict) -> None:
    g = GENERATE
    models = {}
    for arch, kv in GEN_MODELS:
        name = f"{arch}-kv{kv}" if arch == "llama" else arch
        d = os.path.join(tmp, f"gen-{name}")
        cfg = dict(g, n_kv_head=kv, n_head=g["n_head"])
        shutil.rmtree(d, ignore_errors=True)
        run_cmd([a.potop, "train", "--out", d, "--data", CORPUS, "--batch-size", "2", "--steps", "1",
                 "--eval-iters", "1", "--threads", str(max(threads))] + model_flags(cfg, arch), tmp)
        i = info(a, d, tmp)
        models[name] = {"dir": d, "arch": arch, "n_kv_head": kv, "params": i["parameters"],
                        "kv_cache_bytes_per_token": i.get("kv_cache_bytes_per_token"), "runs": {str(t): [] for t in threads}}
    names = list(models)
    for rnd in range(a.rounds):
        for t in threads:
            for name in (names if rnd % 2 == 0 else names[::-1]):
                m = models[name]
                quiet(a)
                stdout, rss = run_cmd([a.potop, "sample", "-m", m["dir"], "-n", str(a.new_tokens), "--temperature", "0",
                                       "--json", "-t", str(t)], tmp)
                r = last_json(stdout)
                run = {"tokens_per_s": r["tokens_per_s"], "tokens": r["samples"][0]["tokens"], "peak_rss_mib": rss}
                m["runs"][str(t)].append(run)
                log(f"generate round {rnd + 1}/{a.rounds} {t} thread(s) {name:10s} {run['tokens_per_s']:8.1f} tok/s "
                    f"({run['tokens']} tokens) {rss:7.1f} MiB")
    for m in models.values():
        del m["dir"]
    results["generate"] = {"shape": g, "new_tokens": a.new_tokens, "models": models}


def report_generate(results: dict) -> list:
    gen = results["generate"]
    g, models = gen["shape"], gen["models"]
    print()
    print(f"3. Generation: potop sample, {gen['new_tokens']} tokens at batch 1, greedy, KV cache; {g['n_layer']} layers, "
          f"{g['n_head']} heads, {g['n_embd']} wide, block {g['block']}, untrained (1 step) weights")
    hdr = (f"{'model':10s} {'kv heads':>8s} {'params':>9s} {'KV B/token':>10s} {'KV at block':>11s} {'thr':>3s} "
           f"{'tokens/s':>14s} {'vs llama-kv8':>13s} {'peak RSS':>10s}  (paired ratio per round)")
    print(hdr)
    print("-" * len(hdr))
    base = models.get("llama-kv8")
    targets = []
    threads = sorted(int(t) for t in next(iter(models.values()))["runs"])
    for t in threads:
        for name, m in models.items():
            runs = m["runs"][str(t)]
            tps = statistics.median(r["tokens_per_s"] for r in runs)
            kv = int(m["kv_cache_bytes_per_token"] or 0)
            ratio, rounds = "", ""
            if base is not None and name != "llama-kv8":
                per = [r["tokens_per_s"] / b["tokens_per_s"] for r, b in zip(runs, base["runs"][str(t)])]
                ratio = f"{statistics.median(per):.2f}x"
                rounds = "[" + ", ".join(f"{x:.2f}" for x in per) + "]"
                if name == "llama-kv2":
                    targets.append((f"generation, {t} thread(s): llama with 2 key/value heads not slower than with 8",
                                    statistics.median(per) >= 1.0, ratio))
            print(f"{name:10s} {m['n_kv_head']:8d} {m['params']:9d} {kv:10d} {kv * g['block'] / 2**20:7.2f} MiB {t:3d} "
                  f"{tps:9.1f} ±{100 * spread([r['tokens_per_s'] for r in runs]):2.0f}% {ratio:>13s} "
                  f"{max(r['peak_rss_mib'] for r in runs):7.1f} MiB  {rounds}")
    if base is not None and "llama-kv2" in models:
        k8, k2 = base["kv_cache_bytes_per_token"], models["llama-kv2"]["kv_cache_bytes_per_token"]
        if k8 and k2:
            targets.append(("KV cache with 2 key/value heads of 8: 4x smaller", k8 / k2 >= 4.0, f"{k8 / k2:.2f}x"))
    return targets


# ---------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--potop", default=os.path.join(ROOT, "build", "release", "src", "potop"))
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "release", "bench", "potop_bench"))
    ap.add_argument("--parts", default="throughput,budget,generate")
    ap.add_argument("--quick", action="store_true",
                    help="one round, one seed, a 15 s budget, fewer steps, no PyTorch set-up trial")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (throughput, generation)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--configs", default="small,mid,mid-gqa", help="throughput configurations")
    ap.add_argument("--no-torch-trial", action="store_true", help="PyTorch with OpenBLAS's own detection, for-loop AdamW")
    ap.add_argument("--budget", type=float, default=60, help="seconds of training steps per run (equal-time part)")
    ap.add_argument("--budget-shape", default="4,4,128,128,8", help="layers,heads,width,block,batch of both archs")
    ap.add_argument("--budget-threads", type=int, default=2)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--evals", type=int, default=2, help="evaluations per run after step 0 (each: --eval-iters "
                    "batches of the training and of the validation split)")
    ap.add_argument("--eval-iters", type=int, default=20)
    ap.add_argument("--calib-steps", type=int, default=25)
    ap.add_argument("--bpe-vocab", type=int, default=2000)
    ap.add_argument("--new-tokens", type=int, default=500)
    ap.add_argument("--max-busy", type=float, default=0.1,
                    help="before each measurement, wait until other processes use at most this fraction of the CPUs")
    ap.add_argument("--quiet-timeout", type=float, default=30, help="longest wait for a quiet machine, seconds")
    ap.add_argument("--quiet-total", type=float, default=240, help="all the waits together, seconds")
    ap.add_argument("--json", default=os.path.join(tempfile.gettempdir(), "potop-llama-bench.json"))
    ap.add_argument("--report", metavar="JSON", help="print the tables of an earlier run's --json and exit")
    a = ap.parse_args()
    if a.report:
        with open(a.report) as f:
            report(json.load(f))
        return 0
    if a.quick:
        a.rounds, a.budget, a.seeds, a.calib_steps, a.eval_iters = 1, 15, a.seeds.split(",")[0], 12, 5
    runbench.QUIET["max_busy"] = a.max_busy
    threads = [int(t) for t in a.threads.split(",")]
    parts = a.parts.split(",")
    for path in (a.potop, a.bench):
        if not os.path.exists(path):
            log(f"llama.py: {path} not found; build it first (bash bench/run.sh llama does)")
            return 2
    if not os.path.exists(CORPUS):
        log(f"llama.py: {CORPUS} not found (scripts/default-corpus.sh)")
        return 2

    started = time.time()
    # A SIGTERM ends the run through the `finally` below, which removes the temporary directory.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = tempfile.mkdtemp(prefix="potop-llama-bench-")
    results: dict = {"cpu": cpu_name(), "peak": {}, "load_average_start": os.getloadavg()[0], "args": vars(a)}
    log(f"{cpu_name()}; load average {results['load_average_start']:.2f}")
    try:
        peak(a, results, threads)
        if "throughput" in parts:
            throughput(a, tmp, threads, results)
        if "budget" in parts:
            budget(a, tmp, results)
        if "generate" in parts:
            generate(a, tmp, threads, results)
        peak(a, results, threads)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    results["load_average_end"] = os.getloadavg()[0]
    results["quiet"] = {"max_busy": a.max_busy, "waited_s": runbench.QUIET["waited"],
                        "busy_before_each": runbench.QUIET["busy"]}
    results["seconds"] = time.time() - started
    with open(a.json, "w") as f:
        json.dump(results, f, indent=1)
    report(results)
    log(f"raw results: {a.json}")
    return 0


def report(results: dict) -> None:
    pk = {int(t): max(v) for t, v in results["peak"].items()}
    print(f"{results['cpu']}; FMA peak measured in this run ({results.get('peak_isa', '?')}): " + ", ".join(
        f"{t} thread{'s' if t > 1 else ''} {pk[t]:.1f} GFLOP/s" for t in sorted(pk)))
    b = results["quiet"]["busy_before_each"]
    print(f"load average {results['load_average_start']:.2f} at start, {results['load_average_end']:.2f} at end; "
          f"other processes' CPU use just before each measurement: median {100 * statistics.median(b):.0f}%, "
          f"max {100 * max(b):.0f}% (waited {results['quiet']['waited_s']:.0f} s for quiet); "
          f"{results['seconds'] / 60:.1f} min in all")
    targets = []
    if "throughput" in results:
        targets += report_throughput(results, pk)
    if "budget" in results:
        targets += report_budget(results)
    if "generate" in results:
        targets += report_generate(results)
    if targets:
        print()
        print("Targets")
        for what, ok, value in targets:
            print(f"  [{'met' if ok else 'MISSED'}] {what}: {value}")


if __name__ == "__main__":
    sys.exit(main())
