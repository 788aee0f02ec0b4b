"""BERT pre-training and classifier inference: potop vs PyTorch, side by side (docs/transfer.md).

    bash bench/run.sh classify [--quick]         # builds potop, then runs this
    python3 bench/classify.py --potop build/release/src/potop --bench build/release/bench/potop_bench

1. Pre-training speed. The recipe's BERT (4 layers, 256 wide, 4 heads, block 128, BPE 8000 with
   [MASK], batches of 32 rows, 15% masked, the masked-LM head on the masked rows only, AdamW):
   `potop bert pretrain` for --steps steps against the same encoder in PyTorch —
   torch.nn.TransformerEncoderLayer (pre-LN, GELU, PyTorch's fused attention), the tied decoder
   with its bias over the masked rows as potop's and fairseq's, AdamW, at 1 and 2 threads each, on
   batches of the same shape and the same number of masked tokens. tokens/s over the warm steps
   (potop: between its own progress records; PyTorch: timed around its steps), the ratio, and
   potop's model FLOP/s as a share of the FMA peak measured in this run.
2. Inference. A classifier of that shape (trained one step: the speed does not depend on the
   weights) labels the SST-2 dev sentences: `potop classify predict` (its wall time less its
   start-up, measured on one sentence) against the PyTorch encoder + [CLS] head on the same
   padded batches of 32. Sentences/s and the ratio, 1 and 2 threads.
3. The fastText reference of the issue (bench/fasttext_classify.sh): dev accuracy, seeds 1-3.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from machine import cpu_name

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(ROOT, "..", "shared", "data")
B, T, LAYERS, WIDTH, HEADS, VOCAB = 32, 128, 4, 256, 4, 8000
MODEL = ["--n-layer", str(LAYERS), "--n-head", str(HEADS), "--n-embd", str(WIDTH), "--block-size", str(T),
         "--dropout", "0"]


def corpus(tmp: str) -> str:
    """The pre-training corpus when scripts/pretrain-corpus.sh has written it, else Potop."""
    for path in (os.path.join(ROOT, "runs", "corpus", "english.txt"), os.path.join(SHARED, "potop.txt")):
        if os.path.exists(path):
            return path
    path = os.path.join(tmp, "text.txt")
    with open(path, "w") as f:
        for i in range(40000):
            f.write(f"Kmicic ruszył z kopyta, a pan Zagłoba zawołał: mości panowie, {i}!\n")
    return path


def fma_peak(bench: str, threads: int) -> float:
    r = json.loads(subprocess.run([bench, "peak", "--threads", str(threads)], check=True, capture_output=True,
                                  text=True).stdout)
    return r["gflops"]


def flops_per_token(vocab: int) -> float:
    """Training FLOPs per token: 6 per parameter of the blocks, the attention's two T x T products,
    and the head over the 15% masked rows (forward + backward = 3 x forward)."""
    blocks = LAYERS * 12 * WIDTH * WIDTH
    attention = LAYERS * 2 * 2 * T * WIDTH
    head = 0.15 * 2 * WIDTH * vocab
    return 3 * (2 * blocks + attention + head)


def potop_pretrain(a, text, tok, tmp, threads):
    d = os.path.join(tmp, f"bert-{threads}")
    subprocess.run([a.potop, "bert", "pretrain", "--data", text, "--tokenizer", tok, "--out", d, *MODEL,
                    "--batch-size", str(B), "--steps", str(a.steps), "--eval-interval", str(10 * a.steps),
                    "--eval-iters", "1", "--log-interval", "1", "--threads", str(threads), "--force"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(d, "metrics.jsonl")) as f:
        rec = {r["step"]: r for r in map(json.loads, f) if r["kind"] == "train"}
    return (a.steps - a.warm) * B * T / (rec[a.steps]["elapsed_s"] - rec[a.warm]["elapsed_s"])


def torch_encoder(torch, vocab):
    nn = torch.nn

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, WIDTH)
            self.wpe = nn.Embedding(T, WIDTH)
            layer = nn.TransformerEncoderLayer(WIDTH, HEADS, 4 * WIDTH, dropout=0.0, activation="gelu",
                                               batch_first=True, norm_first=True)
            self.blocks = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
            self.ln_f = nn.LayerNorm(WIDTH)
            self.bias = nn.Parameter(torch.zeros(vocab))
            self.classifier = nn.Linear(WIDTH, 2)

        def hidden(self, x, pad):
            h = self.wte(x) + self.wpe(torch.arange(x.shape[1]))
            return self.ln_f(self.blocks(h, src_key_padding_mask=pad))

        def mlm_loss(self, x, targets):
            h = self.hidden(x, None).reshape(-1, WIDTH)
            rows = (targets.reshape(-1) >= 0).nonzero().squeeze(1)
            logits = h[rows] @ self.wte.weight.T + self.bias
            return nn.functional.cross_entropy(logits, targets.reshape(-1)[rows])

    return Bert()


def torch_pretrain(a, threads, vocab):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = torch_encoder(torch, vocab)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    masked = round(0.15 * (T - 2))
    g = torch.Generator().manual_seed(1)

    def batch():
        x = torch.randint(4, vocab - 1, (B, T), generator=g)
        targets = torch.full((B, T), -1, dtype=torch.long)
        for b in range(B):
            pos = torch.randperm(T - 2, generator=g)[:masked] + 1
            targets[b, pos] = x[b, pos]
            x[b, pos] = vocab - 1
        return x, targets

    batches = [batch() for _ in range(a.steps)]
    start = None
    for step, (x, targets) in enumerate(batches, 1):
        opt.zero_grad(set_to_none=True)
        model.mlm_loss(x, targets).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step == a.warm:
            start = time.perf_counter()
    return (a.steps - a.warm) * B * T / (time.perf_counter() - start)


def dev_sentences():
    path = os.path.join(SHARED, "classify", "sst2-dev.tsv")
    with open(path, encoding="utf-8") as f:
        return path, [line.rstrip("\n").split("\t", 1)[1] for line in f if "\t" in line]


def potop_predict(a, model, lines_path, n, threads):
    def run(path):
        t = time.perf_counter()
        subprocess.run([a.potop, "classify", "predict", "--model", model, "--input", path, "--threads", str(threads)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t

    one = os.path.join(os.path.dirname(lines_path), "one.txt")
    with open(lines_path) as f, open(one, "w") as g:
        g.write(f.readline())
    startup = min(run(one) for _ in range(3))
    return n / max(1e-9, min(run(lines_path) for _ in range(a.rounds)) - startup)


def torch_predict(a, tok_ids, threads, vocab):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = torch_encoder(torch, vocab).eval()
    rows = [[1, *ids[: T - 2], 2] for ids in tok_ids]
    best = float("inf")
    for _ in range(a.rounds):
        t = time.perf_counter()
        with torch.inference_mode():
            for i in range(0, len(rows), B):
                chunk = rows[i:i + B]
                L = max(len(r) for r in chunk)
                x = torch.zeros((len(chunk), L), dtype=torch.long)
                pad = torch.ones((len(chunk), L), dtype=torch.bool)
                for j, r in enumerate(chunk):
                    x[j, :len(r)] = torch.tensor(r)
                    pad[j, :len(r)] = False
                model.classifier(model.hidden(x, pad)[:, 0]).softmax(-1)
        best = min(best, time.perf_counter() - t)
    return len(rows) / best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--potop", default=os.path.join(ROOT, "build", "release", "src", "potop"))
    p.add_argument("--bench", default=os.path.join(ROOT, "build", "release", "bench", "potop_bench"))
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warm", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    a = p.parse_args()
    if a.quick:
        a.steps, a.warm, a.rounds = 20, 5, 1
    print(f"{cpu_name()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        text = corpus(tmp)
        tok = os.path.join(tmp, "tokenizer")
        subprocess.run([a.potop, "tokenizer", "train", "--kind", "bpe", "--vocab-size", str(VOCAB), "--data", text,
                        "--out", tok], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        vocab = VOCAB + 1  # [MASK]
        print(f"\n1. BERT pre-training, {LAYERS} x {WIDTH}, block {T}, batch {B}, vocabulary {vocab}, on {text}")
        print("threads | potop tokens/s | PyTorch tokens/s | ratio | potop % of FMA peak")
        for threads in (1, 2):
            mine = potop_pretrain(a, text, tok, tmp, threads)
            theirs = torch_pretrain(a, threads, vocab)
            peak = fma_peak(a.bench, threads) if os.path.exists(a.bench) else float("nan")
            share = 100 * mine * flops_per_token(vocab) / 1e9 / peak
            print(f"{threads} | {mine:,.0f} | {theirs:,.0f} | {mine / theirs:.2f}x | {share:.1f}%")
            print(json.dumps({"bench": "bert_pretrain", "threads": threads, "potop_tokens_per_s": round(mine),
                              "torch_tokens_per_s": round(theirs), "ratio": round(mine / theirs, 3),
                              "fma_peak_gflops": peak}))
        if not os.path.exists(os.path.join(SHARED, "classify", "sst2-dev.tsv")):
            print("\n2-3. skipped: no ../shared/data/classify")
            return
        dev, sentences = dev_sentences()
        lines = os.path.join(tmp, "dev.txt")
        with open(lines, "w", encoding="utf-8") as f:
            f.write("\n".join(sentences) + "\n")
        model = os.path.join(tmp, "classifier")
        subprocess.run([a.potop, "classify", "train", "--data", os.path.join(SHARED, "classify", "sst2-train.tsv"),
                        "--dev", dev, "--out", model, "--tokenizer", tok, *MODEL, "--steps", "1", "--force"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(lines, encoding="utf-8") as f:  # the same ids on both sides: potop's tokenizer
            encoded = subprocess.run([a.potop, "tokenizer", "encode", "-t", tok, "--unknown", "replace"], stdin=f,
                                     check=True, capture_output=True, text=True).stdout
        ids = [[int(t) for t in line.split()] for line in encoded.splitlines()]
        print(f"\n2. Classifier inference on the {len(sentences)} SST-2 dev sentences, batches of {B}")
        print("threads | potop sentences/s | PyTorch sentences/s | ratio")
        for threads in (1, 2):
            mine = potop_predict(a, model, lines, len(sentences), threads)
            theirs = torch_predict(a, ids, threads, vocab)
            print(f"{threads} | {mine:,.0f} | {theirs:,.0f} | {mine / theirs:.2f}x")
            print(json.dumps({"bench": "classify_predict", "threads": threads, "potop_sentences_per_s": round(mine),
                              "torch_sentences_per_s": round(theirs), "ratio": round(mine / theirs, 3)}))
    print("\n3. fastText reference (-wordNgrams 2 -epoch 25 -lr 0.5 -dim 50, seeds 1-3)")
    sys.stdout.flush()
    subprocess.run(["bash", os.path.join(HERE, "fasttext_classify.sh")], check=False)


if __name__ == "__main__":
    main()
