"""potop translate vs the PyTorch reference, side by side (docs/translation.md).

    bash bench/run.sh translate [--quick]        # builds potop, then runs this
    python3 bench/translate.py --potop build/release/src/potop [--steps N] [--sentences N]

1. Training speed. The same small encoder-decoder (3 + 3 layers, 128 wide, 4 heads, BPE 4000,
   block 48, batches of at most --batch-tokens padded tokens, dropout 0.1) on the same data
   (tatoeba-eng-pol.tsv, en -> pl): `potop translate train` for --steps steps, then
   scripts/torch_translate_train.py on the directory potop wrote — potop's split, tokens and
   the very same batches in the same order — for as many steps, at 1 and 2 threads each.
   target tokens/s = the target tokens of steps (warm, steps] (known exactly: the batches are
   the same) / the time between the two tools' own progress records at those steps, so start-up,
   tokenizer training and evaluation are left out. Ratio potop / PyTorch.
2. Decoding speed. A model potop trains for 8 steps at 1 thread, its matrices scaled 10x so that
   translations run to the length limit (a fixed workload; see decode_speed), translates the first --sentences test
   sources, one at a time, greedy and beam 4 (alpha 0.6, max-len 16): `potop translate --threads
   1` (its own wall time less its start-up, measured on one sentence) against the PyTorch model
   loaded with the same weights and running the same search (the GNMT-scored beam of
   src/models/encoder_decoder/translator.cpp, one batch of K rows a step, re-running the decoder over the prefix
   without a KV cache — the plain way in PyTorch), 1 thread. sentences/s and the ratio; the share
   of identical translations is printed as a check that both ran the same search.
   Then potop again with --batch-sentences N (default 8): the sentences decoded together, each
   step one pass over the alive hypotheses of all of them; sentences/s, the speed-up over one at a
   time, and how many translations are identical to one-at-a-time's (all must be).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

from machine import cpu_name

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
DATA = os.path.join(ROOT, "..", "shared", "data", "tatoeba-eng-pol.tsv")
DECODE_MODEL_STEPS = 8
MODEL = ["--vocab-size", "4000", "--n-layer", "3", "--n-head", "4", "--n-embd", "128", "--block-size", "48",
         "--dropout", "0.1", "--label-smoothing", "0.1", "--lr-schedule", "noam", "--lr", "0.25", "--warmup", "400"]


def train_records(path):
    with open(path) as f:
        return {r["step"]: r for r in map(json.loads, f) if r["kind"] == "train"}


def rate(records, tokens, warm, steps):
    return sum(tokens[warm:steps]) / (records[steps]["elapsed_s"] - records[warm]["elapsed_s"])


def batch_tokens_per_step(tt, model_dir, potop, steps):
    """Target tokens of batches 0..steps-1 (the same in both tools)."""
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    o = config["training"]
    block = config["model"]["block_size"]
    train = tt.encoded_pairs(tt.read_pairs(os.path.join(model_dir, "train.tsv")), potop, model_dir, 0, block)
    batches = tt.PairBatches(train, o["batch_tokens"], tt.hash64(o["seed"], 1))
    return [int((batches.fill(k)[3] >= 0).sum()) for k in range(steps)]


def train_speed(a, tmp, tt):
    results, tokens = {}, None
    for threads in (1, 2):
        d = os.path.join(tmp, f"potop-{threads}")
        cmd = [a.potop, "translate", "train", "--data", a.data, "--out", d, "--source", "en", "--target", "pl",
               *MODEL, "--batch-tokens", str(a.batch_tokens), "--steps", str(a.steps), "--eval-interval",
               str(10 * a.steps), "--eval-sentences", "0", "--log-interval", "1", "--threads", str(threads)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if tokens is None:
            tokens = batch_tokens_per_step(tt, d, a.potop, a.steps)
        potop_rate = rate(train_records(os.path.join(d, "metrics.jsonl")), tokens, a.warm, a.steps)
        m = os.path.join(tmp, f"torch-{threads}.jsonl")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "torch_translate_train.py"), "--dir", d,
                        "--potop", a.potop, "--steps", str(a.steps), "--threads", str(threads), "--log-interval", "1",
                        "--eval-interval", str(10 * a.steps), "--metrics", m],
                       check=True, stdout=subprocess.DEVNULL)
        torch_rate = rate(train_records(m), tokens, a.warm, a.steps)
        results[threads] = (potop_rate, torch_rate)
        print(f"  train, {threads} thread{'s' if threads > 1 else ''}: potop {potop_rate:8.0f} target tokens/s, "
              f"PyTorch {torch_rate:8.0f}, ratio {potop_rate / torch_rate:.2f}", flush=True)
    return os.path.join(tmp, "potop-1")


# ---- decoding -----------------------------------------------------------------------------------

def torch_search(model, source, beam, alpha, max_extra, block, BOS, EOS):
    """src/models/encoder_decoder/translator.cpp's greedy/beam search in PyTorch: the alive hypotheses are one
    batch; each step re-runs the decoder over their prefixes and keeps the last position."""
    import torch
    src = torch.tensor([source])
    lengths = torch.tensor([len(source)])
    memory = model.encode(src, lengths)
    max_len = min(block - 1, len(source) + max_extra)
    alive = [([], 0.0)]
    finished = []
    for step in range(max_len + 1):
        if not alive or len(finished) >= beam:
            break
        prefixes = torch.tensor([[BOS] + t for t, _ in alive])
        n = len(alive)
        logits = model.decode(prefixes, memory.expand(n, -1, -1), lengths.expand(n))[:, -1].double()
        lp = torch.log_softmax(logits, dim=-1)
        if beam == 1:  # greedy: the first of equal maxima
            nxt = int(torch.argmax(logits[0]))
            if nxt == EOS:
                return alive[0][0]
            alive = [(alive[0][0] + [nxt], 0.0)]
            if step == max_len:
                return alive[0][0]
            continue
        candidates = []
        for h in range(n):
            # the K best tokens, ties to the lower id (potop's partial_sort order)
            vals, ids = torch.sort(lp[h], descending=True, stable=True)
            for i in range(beam):
                candidates.append((alive[h][1] + float(vals[i]), h, int(ids[i])))
        candidates.sort(key=lambda c: -c[0])  # stable, as std::stable_sort
        nxt_alive = []
        for logp, h, tok in candidates:
            if len(nxt_alive) + len(finished) >= beam:
                break
            tokens = list(alive[h][0])
            if tok == EOS or step == max_len:
                if tok != EOS:
                    tokens.append(tok)
                finished.append((tokens, logp / ((5.0 + len(alive[h][0]) + 1) / 6.0) ** alpha))
                continue
            nxt_alive.append((tokens + [tok], logp))
        alive = nxt_alive
    if beam == 1:
        return alive[0][0]
    for tokens, logp in alive:
        finished.append((tokens, logp / ((5.0 + len(tokens)) / 6.0) ** alpha))
    return max(finished, key=lambda f: f[1])[0]  # the first of equal scores, as std::max_element


def decode_speed(a, tmp, tt, model_dir):
    import torch
    import torch_encoder_decoder
    import torch_gpt
    torch.set_num_threads(1)
    with open(os.path.join(model_dir, "test.tsv"), encoding="utf-8") as f:
        sources = [line.split("\t")[0] for line in f][:a.sentences]
    src_file = os.path.join(tmp, "sources.txt")
    with open(src_file, "w", encoding="utf-8") as f:
        f.write("".join(s + "\n" for s in sources))
    one_file = os.path.join(tmp, "one.txt")
    with open(one_file, "w", encoding="utf-8") as f:
        f.write(sources[0] + "\n")
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    c = torch_encoder_decoder.model_config(config)
    model = torch_encoder_decoder.EncoderDecoder(c)
    # A few training steps leave a model that ends every translation at once; with its matrices
    # scaled 10x (as tests/unit/model/test_encoder_decoder.cpp scrambles weights) translations run
    # on to the length limit instead: a fixed, long workload in which every hypothesis lives.
    weights = os.path.join(model_dir, "latest.safetensors")
    tensors, meta = torch_gpt.load_safetensors(weights)
    tensors = {k: v * 10.0 if v.ndim == 2 and k != "wte.weight" else v for k, v in tensors.items()}
    torch_gpt.save_safetensors(weights, tensors, {k: v for k, v in meta.items() if k != "potop.checksum"})
    model.load_numpy(tensors)
    model.eval()
    ids = [s + [tt.EOS] for s in tt.encode(a.potop, model_dir, sources)]
    ids = [s[:c["block_size"] - 1] + [tt.EOS] if len(s) > c["block_size"] else s for s in ids]
    out = {}
    for beam in (1, 4):
        def potop_run(path, batch=1):
            start = time.perf_counter()
            r = subprocess.run([a.potop, "translate", "--model", model_dir, "--checkpoint", "latest", "--threads", "1",
                                "--beam", str(beam), "--alpha", "0.6", "--max-len", "16", "--input", path,
                                "--batch-sentences", str(batch)],
                               check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            return time.perf_counter() - start, r.stdout.decode().split("\n")[:-1]
        startup = min(potop_run(one_file)[0] for _ in range(2))  # loading the model, one sentence
        seconds, potop_out = potop_run(src_file)
        potop_rate = len(sources) / max(seconds - startup, 1e-9)
        seconds, batched_out = potop_run(src_file, a.batch_sentences)
        batched_rate = len(sources) / max(seconds - startup, 1e-9)
        start = time.perf_counter()
        with torch.no_grad():
            torch_ids = [torch_search(model, s, beam, 0.6, 16, c["block_size"], tt.BOS, tt.EOS) for s in ids]
        torch_rate = len(sources) / (time.perf_counter() - start)
        torch_out = tt.decode(a.potop, model_dir, torch_ids)
        same = sum(x == y for x, y in zip(potop_out, torch_out))
        length = sum(len(t) for t in torch_ids) / len(torch_ids)
        name = "greedy" if beam == 1 else f"beam {beam}"
        print(f"  decode {name:7}, 1 thread: potop {potop_rate:7.1f} sentences/s, PyTorch {torch_rate:7.1f}, "
              f"ratio {potop_rate / torch_rate:.2f}; identical translations {same}/{len(sources)}, "
              f"{length:.1f} tokens each", flush=True)
        same_batched = sum(x == y for x, y in zip(potop_out, batched_out))
        print(f"  decode {name:7}, 1 thread, {a.batch_sentences} sentences together: potop {batched_rate:7.1f} "
              f"sentences/s, {batched_rate / potop_rate:.2f}x one at a time; identical to one at a time "
              f"{same_batched}/{len(sources)}", flush=True)
        out[beam] = (potop_rate, torch_rate, same, batched_rate, same_batched)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--potop", required=True)
    p.add_argument("--data", default=DATA)
    p.add_argument("--steps", type=int, default=20, help="training steps of each run")
    p.add_argument("--warm", type=int, default=2, help="steps left out of the rate (start-up)")
    p.add_argument("--batch-tokens", type=int, default=1024)
    p.add_argument("--sentences", type=int, default=40, help="test sentences decoded")
    p.add_argument("--batch-sentences", type=int, default=8, help="sentences potop decodes together")
    p.add_argument("--quick", action="store_true", help="8 steps, 15 sentences: under a minute on an idle machine")
    p.add_argument("--decode-only", action="store_true", help="no training speed: only the decoding benchmark")
    a = p.parse_args()
    if a.quick:
        a.steps, a.sentences = 8, 15
    if not os.path.exists(a.data):
        sys.exit(f"bench/translate.py: {a.data} not found (the shared data directory)")
    import torch
    import torch_translate_train as tt
    print(f"{cpu_name()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; torch {torch.__version__}")
    print(f"encoder-decoder 3+3 x 128, BPE 4000, batches of <= {a.batch_tokens} padded tokens, {a.steps} steps "
          f"(rate over steps {a.warm + 1}..{a.steps}); en -> pl, {os.path.basename(a.data)}", flush=True)
    with tempfile.TemporaryDirectory(prefix="potop-bench-translate.") as tmp:
        if not a.decode_only:
            train_speed(a, tmp, tt)
        # The decoding model is always trained for 8 steps: the scaling of decode_speed keeps its
        # translations running to the length limit; after 20 steps not even 80x did (0 tokens).
        d = os.path.join(tmp, "decode-model")
        subprocess.run([a.potop, "translate", "train", "--data", a.data, "--out", d, "--source", "en", "--target",
                        "pl", *MODEL, "--batch-tokens", str(a.batch_tokens), "--steps", str(DECODE_MODEL_STEPS),
                        "--eval-interval", str(10 * DECODE_MODEL_STEPS), "--eval-sentences", "0", "--threads", "1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        decode_speed(a, tmp, tt, d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
