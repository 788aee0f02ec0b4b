"""The PyTorch reference trainer for `potop translate train` (docs/translation.md): the same
encoder-decoder (scripts/torch_encoder_decoder.py), the same data, split, tokens and batches, the
same recipe, so the README can compare BLEU and wall time.

    potop translate train --data pairs.tsv --out DIR ... --steps 1     # writes the split, tokenizer, config
    /usr/bin/python3 scripts/torch_translate_train.py --dir DIR --potop build/release/src/potop \
        [--steps N] [--init DIR/resume.safetensors] [--threads 2] [--metrics torch.jsonl] \
        [--save-dir TORCH_DIR]

--save-dir writes the trained weights as a potop model directory (DIR's config, tokenizer and
split, and latest.safetensors holding torch's weights under potop's names), so `potop translate
eval --model TORCH_DIR` scores the PyTorch model with the same search and metrics as potop's.

What it shares with potop, read from DIR (so nothing is re-derived differently):
  - the split: DIR/train.tsv and DIR/dev.tsv, which potop wrote;
  - the tokens: `potop tokenizer encode -t DIR` (potop's own BPE tokenizer), a source being its
    tokens + </s>; pairs longer than the block size left out as potop does;
  - the batches: potop's PairBatches written out in Python — examples stably sorted by (source
    length, target length), cut where (members + 1) · longest > batch_tokens, the batch order of
    epoch e shuffled by potop's xoshiro256** seeded hash64(hash64(seed, 1), e) — so batch k of a
    run is the same padded tensor in both;
  - the options: DIR/config.json's training options (schedule, lr, warm-up, Adam betas and eps,
    weight decay, gradient clipping, label smoothing, dropout, steps, eval interval);
  - evaluation: dev loss over every dev batch in length order, train loss over as many training
    batches spread over the lengths, and dev BLEU / chrF of greedy translations of the first
    eval_sentences dev pairs (BLEU as sacreBLEU's via nltk, chrF2 written out:
    scripts/translation_metrics_expected.py, the same definitions potop's test checks against).

What differs: dropout masks (torch's generator, not potop's counter hash), so only runs with
dropout 0 give step-identical losses; a fresh start uses torch's generator for the initial
weights (the same distributions as potop's init, different numbers) — pass --init with a potop
checkpoint (weights, or resume.safetensors: weights and Adam's moments and step count) to start
from potop's exact state. Losses and evaluations are printed and written as JSON lines.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_encoder_decoder  # noqa: E402
import torch_gpt  # noqa: E402

PAD, BOS, EOS, UNK = 0, 1, 2, 3  # potop's special ids (kPadId, kBosId, kEosId, kUnkId in tokenizer/tokenizer.h)
MASK64 = (1 << 64) - 1


# ---- potop's random numbers (src/core/rng.h), for the batch order --------------------------------

def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return x, z ^ (z >> 31)


def hash64(seed, counter):
    return splitmix64(seed ^ ((counter * 0xD1B54A32D192ED03) & MASK64))[1]


class Rng:
    """xoshiro256** seeded through splitmix64, as potop's Rng."""

    def __init__(self, seed):
        self.s, x = [], seed
        for _ in range(4):
            x, z = splitmix64(x)
            self.s.append(z)

    def next_u64(self):
        s = self.s
        rotl = lambda v, k: ((v << k) | (v >> (64 - k))) & MASK64  # noqa: E731
        result = (rotl((s[1] * 5) & MASK64, 7) * 9) & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def below(self, n):
        return (self.next_u64() * n) >> 64


# ---- data ------------------------------------------------------------------------------------------

def read_pairs(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip("\n")]


def encode(potop, model_dir, lines):
    """potop's token ids of each line (its `tokenizer encode`, unknown text replaced by <unk>)."""
    text = "".join(line + "\n" for line in lines)
    out = subprocess.run([potop, "tokenizer", "encode", "-t", model_dir, "--unknown", "replace"], input=text.encode(),
                         stdout=subprocess.PIPE, check=True).stdout.decode().split("\n")
    return [[int(t) for t in line.split()] for line in out[:len(lines)]]


def decode(potop, model_dir, id_lists):
    text = "".join(" ".join(map(str, ids)) + "\n" for ids in id_lists)
    out = subprocess.run([potop, "tokenizer", "decode", "-t", model_dir], input=text.encode(),
                         stdout=subprocess.PIPE, check=True).stdout.decode().split("\n")
    return out[:len(id_lists)]


def encoded_pairs(pairs, potop, model_dir, source_column, block):
    """(source ids + </s>, target ids) of the pairs that fit the block size, as potop's encode_pairs."""
    src = encode(potop, model_dir, [p[source_column] for p in pairs])
    tgt = encode(potop, model_dir, [p[1 - source_column] for p in pairs])
    out = []
    for s, t in zip(src, tgt):
        s = s + [EOS]
        if len(s) <= block and len(t) + 1 <= block:
            out.append((s, t))
    return out


class PairBatches:
    """potop's PairBatches (src/data/parallel_corpus.cpp): the same batches in the same order."""

    def __init__(self, examples, batch_tokens, seed):
        self.examples, self.seed = examples, seed
        idx = sorted(range(len(examples)), key=lambda i: (len(examples[i][0]), len(examples[i][1])))  # stable
        self.batches, current, longest = [], [], 0
        self.target_tokens = 0
        for i in idx:
            length = max(len(examples[i][0]), len(examples[i][1]) + 1)
            self.target_tokens += len(examples[i][1]) + 1
            if current and (len(current) + 1) * max(longest, length) > batch_tokens:
                self.batches.append(current)
                current, longest = [], 0
            current.append(i)
            longest = max(longest, length)
        if current:
            self.batches.append(current)
        self.epoch, self.order = -1, None

    def __len__(self):
        return len(self.batches)

    def fill(self, k):
        epoch = k // len(self)
        if epoch != self.epoch:
            order = list(range(len(self)))
            rng = Rng(hash64(self.seed, epoch))
            for i in range(len(self) - 1, 0, -1):
                j = rng.below(i + 1)
                order[i], order[j] = order[j], order[i]
            self.epoch, self.order = epoch, order
        return self.members(self.batches[self.order[k % len(self)]])

    def fill_sorted(self, i):
        return self.members(self.batches[i])

    def members(self, members):
        ex = [self.examples[i] for i in members]
        B = len(ex)
        S = max(1, max(len(s) for s, _ in ex))
        T = max(1, max(len(t) + 1 for _, t in ex))
        source = torch.full((B, S), PAD, dtype=torch.long)
        lengths = torch.tensor([len(s) for s, _ in ex], dtype=torch.long)
        tokens = torch.full((B, T), PAD, dtype=torch.long)
        targets = torch.full((B, T), -1, dtype=torch.long)
        for b, (s, t) in enumerate(ex):
            source[b, :len(s)] = torch.tensor(s)
            tokens[b, 0] = BOS
            if t:
                tokens[b, 1:len(t) + 1] = torch.tensor(t)
                targets[b, :len(t)] = torch.tensor(t)
            targets[b, len(t)] = EOS
        return source, lengths, tokens, targets


# ---- recipe --------------------------------------------------------------------------------------

def learning_rate(o, step):
    """potop's learning_rate (src/models/encoder_decoder/translation_trainer.cpp) for 0-based step."""
    if o["lr_schedule"] == "noam":
        s, w = step + 1.0, float(o["warmup"])
        return o["lr"] / math.sqrt(o["n_embd"]) * min(1.0 / math.sqrt(s), s * w ** -1.5)
    # potop's LRSchedule (src/train/schedule.h): linear warm-up, cosine to min-lr at the last step
    lr, min_lr, warmup, steps = o["lr"], o["min_lr"], o["warmup"], o["steps"]
    if step < warmup:
        return lr * (step + 1) / (warmup + 1)
    if step >= steps:
        return min_lr
    ratio = (step - warmup) / max(1, steps - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


def init_weights(model, C, n_layer):
    """Fresh weights from the distributions potop uses (GPT-2's): wte N(0, C^-1/2), matrices
    N(0, 0.02), residual projections N(0, 0.02 / sqrt(2 n_layer)), biases 0, LayerNorm gains 1."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name == "wte.weight":
                p.normal_(0.0, C ** -0.5)
            elif name.endswith("c_proj.weight"):
                p.normal_(0.0, 0.02 / math.sqrt(2 * n_layer))
            elif p.dim() >= 2:
                p.normal_(0.0, 0.02)
            elif ".ln" in name and name.endswith(".weight"):
                p.fill_(1.0)
            else:
                p.zero_()


@torch.no_grad()
def greedy(model, sources, block, max_extra=16):
    """Greedy translations (ids without <s> and </s>) as potop's greedy_search, one sentence at a time."""
    out = []
    for src in sources:
        src = src[:block]
        s = torch.tensor([src])
        memory = model.encode(s, torch.tensor([len(src)]))
        max_len = min(block - 1, len(src) + max_extra)
        ys = [BOS]
        for step in range(max_len + 1):
            logits = model.decode(torch.tensor([ys]), memory, torch.tensor([len(src)]))[0, -1]
            nxt = int(torch.argmax(logits))
            if nxt == EOS:
                break
            ys.append(nxt)
            if step == max_len:
                break
        out.append(ys[1:])
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", required=True, help="a model directory written by potop translate train")
    p.add_argument("--potop", required=True, help="the potop binary (its tokenizer)")
    p.add_argument("--steps", type=int, help="optimizer steps (default: the run's --steps)")
    p.add_argument("--init", help="start from this potop checkpoint (weights; a train state adds Adam's state)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0, help="torch's seed (fresh weights, dropout)")
    p.add_argument("--log-interval", type=int, help="default: the run's")
    p.add_argument("--eval-interval", type=int, help="default: the run's")
    p.add_argument("--metrics", help="write JSON lines here too")
    p.add_argument("--save-dir", help="write the trained model here as a potop model directory")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    with open(os.path.join(a.dir, "config.json")) as f:
        config = json.load(f)
    o = dict(config["training"])
    c = torch_encoder_decoder.model_config(config)
    o["n_embd"] = c["n_embd"]
    steps = a.steps if a.steps is not None else o["steps"]
    o["steps"] = steps
    columns = o["columns"].split(",")
    source_column = columns.index(config["source"])
    block = c["block_size"]

    train = encoded_pairs(read_pairs(os.path.join(a.dir, "train.tsv")), a.potop, a.dir, source_column, block)
    dev_pairs = read_pairs(os.path.join(a.dir, "dev.tsv"))
    dev = encoded_pairs(dev_pairs, a.potop, a.dir, source_column, block)
    batches = PairBatches(train, o["batch_tokens"], hash64(o["seed"], 1))
    dev_batches = PairBatches(dev or train, o["batch_tokens"], 0)

    model = torch_encoder_decoder.EncoderDecoder(c)
    optimizer = torch_gpt.make_adamw(model, 0.0, (o["beta1"], o["beta2"]), o["weight_decay"], o["eps"])
    start = 0
    if a.init:
        tensors, meta = torch_gpt.load_safetensors(a.init)
        model.load_numpy(tensors)
        if meta.get("potop.kind") == "train_state":
            start = int(meta["potop.step"])
            adam_steps = int(meta["potop.adam_steps"])
            for name, param in model.named_parameters():
                optimizer.state[param] = {
                    "step": torch.tensor(float(adam_steps)),
                    "exp_avg": torch.from_numpy(tensors["adamw.m." + name].reshape(param.shape).copy()),
                    "exp_avg_sq": torch.from_numpy(tensors["adamw.v." + name].reshape(param.shape).copy())}
    else:
        init_weights(model, c["n_embd"], c["n_layer"])

    metrics = open(a.metrics, "w") if a.metrics else None

    def record(r):
        line = json.dumps(r)
        print(line, flush=True)
        if metrics:
            metrics.write(line + "\n")
            metrics.flush()

    def batch_loss(b):
        source, lengths, tokens, targets = b
        _, loss = model(source, lengths, tokens, targets)
        return loss, int((targets >= 0).sum())

    @torch.no_grad()
    def mean_loss(from_batches, n):
        total, count = 0.0, 0
        for i in range(n):
            loss, k = batch_loss(from_batches.fill_sorted(i * len(from_batches) // n))
            total += float(loss) * k
            count += k
        return total / count

    def evaluate(step):
        model.eval()
        n = min(len(dev_batches), len(batches))
        r = {"kind": "eval", "step": step, "train_loss": mean_loss(batches, n),
             "val_loss": mean_loss(dev_batches, len(dev_batches))}
        k = min(o["eval_sentences"], len(dev_pairs))
        if k > 0:
            import translation_metrics_expected as tm
            sources = encode(a.potop, a.dir, [p[source_column] for p in dev_pairs[:k]])
            hyps = decode(a.potop, a.dir, greedy(model, [s + [EOS] for s in sources], block))
            refs = [p[1 - source_column] for p in dev_pairs[:k]]
            r["dev_bleu"], r["dev_chrf"] = tm.bleu(hyps, refs), tm.chrf(hyps, refs)
        model.train()
        record(r)

    log_interval = a.log_interval or o["log_interval"]
    eval_interval = a.eval_interval or o["eval_interval"]
    model.train()
    began, tokens_seen, window = time.perf_counter(), 0, time.perf_counter()
    for step in range(start, steps):
        lr = learning_rate(o, step)
        torch_gpt.set_lr(optimizer, lr)
        optimizer.zero_grad(set_to_none=True)
        loss, counted = batch_loss(batches.fill(step))
        loss.backward()
        norm = torch_gpt.clip_grad_norm(model, o["grad_clip"])
        optimizer.step()
        tokens_seen += counted
        if (step + 1) % log_interval == 0 or step == start or step + 1 == steps:
            now = time.perf_counter()
            record({"kind": "train", "step": step + 1, "loss": float(loss), "lr": lr, "grad_norm": norm,
                    "tokens_per_s": tokens_seen / max(now - window, 1e-9), "elapsed_s": now - began})
            tokens_seen, window = 0, now
        if (step + 1) % eval_interval == 0 or step + 1 == steps:
            evaluate(step + 1)
    record({"kind": "done", "steps": steps, "wall_s": time.perf_counter() - began})
    if a.save_dir:
        save_model_dir(model, a.dir, a.save_dir)
    return 0


def save_model_dir(model, potop_dir, out):
    """A potop model directory with torch's weights: everything but the checkpoints is copied from
    potop_dir; latest.safetensors keeps potop's metadata (config, tokenizer) without its checksum,
    which potop does not require."""
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(potop_dir):
        path = os.path.join(potop_dir, name)
        if os.path.isfile(path) and not name.endswith(".safetensors") and name != "metrics.jsonl":
            shutil.copy2(path, os.path.join(out, name))
    _, meta = torch_gpt.load_safetensors(os.path.join(potop_dir, "latest.safetensors"))
    meta = {k: v for k, v in meta.items() if k not in ("potop.checksum", "step", "train_loss", "val_loss")}
    tensors = {name: p.detach().contiguous() for name, p in model.named_parameters()}
    torch_gpt.save_safetensors(os.path.join(out, "latest.safetensors"), tensors, meta)


if __name__ == "__main__":
    sys.exit(main())
