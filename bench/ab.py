"""Two potop binaries side by side, in one run: is a refactor as fast as what it replaced?

    /usr/bin/python3 bench/ab.py --a OLD_POTOP --b NEW_POTOP [--rounds 3] [--arch gpt2,llama]

For each decoder architecture (--arch: gpt2 and llama by default), trains one small character
model with A, then measures, for each binary in turn (A B A B ...):
  train       tokens/s of 40 training steps (batch 8 x 64)
  sample      tokens/s of 5000 greedy tokens, 1 thread, and of its q8_0 and q4_0 quantizations
  serve       completion tokens/s of potop serve under 4 concurrent clients for a few seconds
and prints each binary's median, the ratio B/A and the spread of each one's rounds (the noise), with the
FMA peak of this CPU measured in the same run (potop_bench peak, when --bench is given).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def corpus(path):
    words = ("kmicic ruszył z kopyta a pan zagłoba zawołał żywo mości panowie litwo ojczyzno moja ty jesteś "
             "jak zdrowie ile cię trzeba cenić ten tylko się dowie kto cię stracił").split()
    seed, out = 7, []
    for i in range(60000):
        seed = (seed * 1103515245 + 12345) % 2147483648
        out.append(words[seed % len(words)] + (".\n" if i % 13 == 12 else " "))
    open(path, "w").write("".join(out))


TRAIN = ["--n-layer", "4", "--n-head", "4", "--n-embd", "128", "--block-size", "64", "--batch-size", "8",
         "--eval-iters", "1", "--log-interval", "1000", "--threads", "1", "--seed", "1"]


# The flags of each architecture beyond TRAIN's.
ARCH = {"gpt2": [], "llama": ["--arch", "llama", "--n-kv-head", "2"]}


def train_rate(potop, work, data, arch):
    out = tempfile.mkdtemp(prefix="train-", dir=work)
    os.rmdir(out)  # a new run's directory
    run([potop, "train", "--data", data, "--out", out, "--steps", "40", "--eval-interval", "1000", *TRAIN, *ARCH[arch]])
    records = [json.loads(line) for line in open(os.path.join(out, "metrics.jsonl"))]
    rates = [r["tokens_per_s"] for r in records if r.get("kind") == "train" and "tokens_per_s" in r]
    return statistics.median(rates[5:] or rates)


def sample_rate(potop, model):
    r = run([potop, "sample", "-m", model, "-p", "pan ", "-n", "5000", "--temperature", "0", "--threads", "1"])
    return float(re.search(r"([0-9.]+) tokens/s", r.stderr).group(1))


def serve_rate(potop, model, clients=4, seconds=4.0):
    proc = subprocess.Popen([potop, "serve", "-m", model, "--port", "0", "--threads", "1"], stderr=subprocess.PIPE, text=True)
    port = None
    for line in proc.stderr:
        m = re.search(r"listening on http://127.0.0.1:(\d+)", line)
        if m:
            port = m.group(1)
            break
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    tokens, lock, stop = [0], threading.Lock(), time.time() + seconds

    def client(k):
        body = json.dumps({"prompt": "pan ", "max_tokens": 32, "seed": k, "temperature": 0.8}).encode()
        while time.time() < stop:
            req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=body,
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req) as r:
                n = json.load(r)["usage"]["completion_tokens"]
            with lock:
                tokens[0] += n

    start = time.time()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - start
    proc.terminate()
    proc.wait()
    return tokens[0] / elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="the reference potop binary (before)")
    ap.add_argument("--b", required=True, help="the potop binary measured against it (after)")
    ap.add_argument("--bench", help="potop_bench, for the FMA peak of this CPU in the same run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--arch", default="gpt2,llama", help="the architectures measured, comma-separated")
    args = ap.parse_args()
    if args.bench:
        peak = json.loads(run([args.bench, "peak", "--threads", "1", "--seconds", "0.3"]).stdout)
        print(f"FMA peak: {peak['gflops']:.1f} GFLOP/s on one core ({peak['isa']}, {peak['ghz']:.2f} GHz)")
    print(f"load average: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="potop-ab.") as work:
        data = os.path.join(work, "text.txt")
        corpus(data)
        print(f"{'workload':36} {'A':>10} {'B':>10} {'B/A':>6}  spread of A's and B's rounds")
        for arch in args.arch.split(","):
            model = os.path.join(work, "model-" + arch)
            run([args.a, "train", "--data", data, "--out", model, "--steps", "200", "--eval-interval", "200", *TRAIN,
                 *ARCH[arch]])
            quantized = {}
            for q in ("q8_0", "q4_0"):
                quantized[q] = model + "-" + q
                run([args.a, "quantize", "-m", model, "--type", q, "--out", quantized[q]])
            workloads = {
                "train (tokens/s)": lambda p: train_rate(p, work, data, arch),
                "sample f32 (tokens/s)": lambda p: sample_rate(p, model),
                "sample q8_0 (tokens/s)": lambda p: sample_rate(p, quantized["q8_0"]),
                "sample q4_0 (tokens/s)": lambda p: sample_rate(p, quantized["q4_0"]),
                "serve, 4 clients (tokens/s)": lambda p: serve_rate(p, model),
            }
            for name, measure in workloads.items():
                a, b = [], []
                for _ in range(args.rounds):
                    a.append(measure(args.a))
                    b.append(measure(args.b))
                ma, mb = statistics.median(a), statistics.median(b)
                spread = lambda xs, m: (max(xs) - min(xs)) / 2 / m if m else 0  # noqa: E731
                print(f"{arch + ' ' + name:36} {ma:10.0f} {mb:10.0f} {mb / ma:6.3f}  ±{spread(a, ma):.1%} "
                      f"±{spread(b, mb):.1%}", flush=True)

if __name__ == "__main__":
    sys.exit(main())
