"""Fine-tunes potop's pre-trained BERT in PyTorch with `potop classify train`'s recipe: the
"PyTorch's BERT with the same recipe" row of the transfer-learning table (docs/classify.md).

    /usr/bin/python3 scripts/torch_classify.py --init-from BERT_DIR --data TRAIN.tsv --dev DEV.tsv \
        --out DIR [--epochs 3 --batch-size 32 --lr 5e-5 --warmup 0 --eval-interval N --patience 3 \
        --seed 1337 --classifier-dropout 0.1 --threads 0]

What is the same as potop's (src/models/classifier/, src/train/):
  - the model: BERT_DIR's body (scripts/torch_bert.py, parity-tested against potop's), dropout on
    h[:, 0] ([CLS]), then classifier.weight (K, C) ~ N(0, 0.02) and classifier.bias = 0;
  - the rows: [CLS] ids [SEP] (<bos> ... <eos>) of BERT_DIR's SentencePiece tokenizer, the ids cut
    to block_size - 2 first; classes: the sorted training labels;
  - the batches: the same ones, in the same order (EpochBatches: each epoch a Fisher-Yates shuffle
    drawn by potop's xoshiro256** from (seed, epoch)), padded with <pad> to the batch's longest row,
    the padded keys masked;
  - the run: steps = epochs x batches per epoch, linear warm-up then linear decay to --min-lr,
    AdamW (β 0.9/0.999, eps 1e-8, decay on matrices and embeddings only), global-norm clipping at 1,
    dev accuracy at step 0, every --eval-interval steps (default: one epoch) and at the end, early
    stopping after --patience evaluations without a better one; the best dev accuracy is the result.
What differs: dropout masks (torch's generator, not potop's counter hash) and the initial
classifier.weight (torch's normal, not potop's Box-Muller stream), so the numbers agree in
distribution over seeds, not bit for bit. With --dropout 0 --classifier-dropout 0 and --init-head
(potop's initial head, e.g. the latest.safetensors of a `classify train --steps 1 --lr 1e-10` of
the same seed) a run follows potop's: the same losses and dev accuracies to the printed digits.

Prints progress to stderr and, at the end, one JSON line on stdout:
  {"dev_accuracy": 0.87, "best_step": 400, "steps": 900, "seconds": 123.4}
and writes DIR/best.pt (the best model's state_dict) and DIR/result.json (that line).

Needs torch, numpy and sentencepiece (Debian: python3-torch python3-numpy python3-sentencepiece).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from typing import List, Sequence, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_bert  # noqa: E402
import torch_gpt  # noqa: E402

PAD, BOS, EOS = 0, 1, 2  # potop's specials: [CLS] = <bos>, [SEP] = <eos>
MASK64 = (1 << 64) - 1


class Fail(Exception):
    """A one-line error for the user (the flag or file named); exit 1, nothing written."""


# ---- potop's random numbers (src/core/rng.h), for the same batches --------------------------

def splitmix64(x: int) -> Tuple[int, int]:
    """-> (the output, the advanced state)."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31), x


def hash64(seed: int, counter: int) -> int:
    return splitmix64(seed ^ ((counter * 0xD1B54A32D192ED03) & MASK64))[0]


class Rng:
    """xoshiro256** seeded through splitmix64, as potop's Rng."""

    def __init__(self, seed: int):
        self.s, x = [], seed & MASK64
        for _ in range(4):
            out, x = splitmix64(x)
            self.s.append(out)

    @staticmethod
    def _rotl(x: int, k: int) -> int:
        return ((x << k) | (x >> (64 - k))) & MASK64

    def next_u64(self) -> int:
        s = self.s
        result = (self._rotl((s[1] * 5) & MASK64, 7) * 9) & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = self._rotl(s[3], 45)
        return result

    def below(self, n: int) -> int:
        return (self.next_u64() * n) >> 64


def shuffled(n: int, seed: int) -> List[int]:
    """potop's Fisher-Yates of 0..n-1 with Rng(seed)."""
    order, rng = list(range(n)), Rng(seed)
    for i in range(n, 1, -1):
        j = rng.below(i)
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


class EpochBatches:
    """potop's EpochBatches (classifier_data.cpp): batch `index` depends on the index alone."""

    def __init__(self, n: int, B: int, seed: int):
        self.n, self.B, self.seed = n, B, seed
        self.per_epoch = (n + B - 1) // B
        self.epoch, self.order = -1, []

    def at(self, index: int) -> List[int]:
        epoch, k = divmod(index, self.per_epoch)
        if epoch != self.epoch:
            self.order, self.epoch = shuffled(self.n, hash64(self.seed, epoch)), epoch
        return self.order[k * self.B:(k + 1) * self.B]


# ---- data ------------------------------------------------------------------------------------

def read_tsv(path: str, flag: str) -> List[Tuple[str, str, int]]:
    """(label, text, line number) of label<TAB>text lines as potop's read_labelled_tsv reads them
    (BOM, CRLF, blank lines)."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
    except OSError as e:
        raise Fail(f"--{flag} {path}: cannot read it ({e.strerror})")
    except UnicodeDecodeError as e:
        raise Fail(f"--{flag} {path}: not UTF-8 (byte {e.start})")
    text = text[1:] if text.startswith("\ufeff") else text
    out = []
    for n, row in enumerate(text.split("\n"), 1):
        row = row[:-1] if row.endswith("\r") else row
        if not row:
            continue
        label, tab, body = row.partition("\t")
        if not tab or not label.strip(" ") or not body.strip(" \t"):
            raise Fail(f"--{flag} {path}:{n}: expected label<TAB>text")
        out.append((label, body, n))
    if not out:
        raise Fail(f"--{flag} {path}: no examples (expected label<TAB>text lines)")
    return out


def encode_rows(sp, texts: Sequence[str], block_size: int, what: str) -> Tuple[List[List[int]], int]:
    """[CLS] ids [SEP] per text, the ids cut to block_size - 2 (potop's encode_texts); -> rows, cut."""
    rows, cut, room = [], 0, block_size - 2
    for i, t in enumerate(texts):
        ids = sp.encode(t)
        if not ids:
            raise Fail(f"{what}: text {i + 1} gives no token")
        if len(ids) > room:
            ids, cut = ids[:room], cut + 1
        rows.append([BOS] + ids + [EOS])
    return rows, cut


def pad(rows: Sequence[List[int]], picked: Sequence[int]) -> Tuple[torch.Tensor, torch.Tensor]:
    T = max(len(rows[i]) for i in picked)
    tokens = torch.full((len(picked), T), PAD, dtype=torch.long)
    for r, i in enumerate(picked):
        tokens[r, :len(rows[i])] = torch.tensor(rows[i])
    return tokens, torch.tensor([len(rows[i]) for i in picked])


# ---- the model -------------------------------------------------------------------------------

class BertClassifier(nn.Module):
    """potop's Classifier with a BERT body and cls pooling: logits = dropout(h[:, 0])·Wᵀ + c."""

    def __init__(self, config: dict, labels: int, classifier_dropout: float):
        super().__init__()
        self.body = torch_bert.Bert(config)
        self.drop = nn.Dropout(classifier_dropout)
        self.classifier = nn.Linear(self.body.config["n_embd"], labels)

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.drop(self.body.encode(tokens, lengths)[:, 0]))


def load_body(init_from: str):
    """-> (the config of BERT_DIR, its tensors, its SentencePiece processor)."""
    try:
        with open(os.path.join(init_from, "config.json")) as f:
            config = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise Fail(f"--init-from {init_from}: no readable config.json ({e})")
    if config.get("kind") not in (None, "bert"):
        raise Fail(f"--init-from {init_from}: a {config.get('kind')} model; this script fine-tunes a BERT")
    model_file = os.path.join(init_from, "tokenizer.model")
    tok_kind = config.get("tokenizer")  # a model directory names its tokenizer's kind here
    if tok_kind not in ("bpe", "unigram") or not os.path.isfile(model_file):
        raise Fail(f"--init-from {init_from}: needs a bpe or unigram tokenizer (tokenizer.model); found {tok_kind}")
    weights = os.path.join(init_from, "best.safetensors")
    if not os.path.isfile(weights):
        raise Fail(f"--init-from {init_from}: no best.safetensors")
    try:
        import sentencepiece
    except ImportError:
        raise Fail("sentencepiece is missing: install python3-sentencepiece (Debian) or pip's sentencepiece")
    sp = sentencepiece.SentencePieceProcessor(model_file=model_file)
    if (sp.pad_id(), sp.bos_id(), sp.eos_id()) != (PAD, BOS, EOS):
        raise Fail(f"--init-from {init_from}: tokenizer.model's <pad>/<bos>/<eos> are not ids 0/1/2 as potop's")
    tensors, _ = torch_gpt.load_safetensors(weights)
    return config, tensors, sp


def load_head(path: str, shape: Tuple[int, int]) -> dict:
    try:
        tensors, _ = torch_gpt.load_safetensors(path)
    except (OSError, ValueError, KeyError) as e:
        raise Fail(f"--init-head {path}: not a readable safetensors file ({e})")
    if tuple(tensors.get("classifier.weight", np.zeros(0)).shape) != shape or \
            tuple(tensors.get("classifier.bias", np.zeros(0)).shape) != shape[:1]:
        raise Fail(f"--init-head {path}: has no classifier.weight {shape} and classifier.bias ({shape[0]},)")
    return tensors


# ---- training --------------------------------------------------------------------------------

def lr_at(step: int, a) -> float:
    """potop's LRSchedule, linear shape (Hugging Face's get_linear_schedule_with_warmup)."""
    if step < a.warmup:
        return a.lr * (step + 1) / (a.warmup + 1)
    if step >= a.steps:
        return a.min_lr
    ratio = (step - a.warmup) / max(1, a.steps - a.warmup)
    return a.min_lr + (1.0 - ratio) * (a.lr - a.min_lr)


@torch.no_grad()
def accuracy(model: nn.Module, rows, classes, B: int) -> float:
    model.eval()
    correct = 0
    for first in range(0, len(rows), B):
        picked = list(range(first, min(first + B, len(rows))))
        tokens, lengths = pad(rows, picked)
        correct += int((model(tokens, lengths).argmax(-1) == torch.tensor([classes[i] for i in picked])).sum())
    model.train()
    return correct / len(rows)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--init-from", required=True, help="a potop BERT directory (potop bert pretrain --out)")
    p.add_argument("--data", required=True, help="training examples: label<TAB>text lines")
    p.add_argument("--dev", required=True, help="dev examples: early stopping and the reported accuracy")
    p.add_argument("--out", required=True, help="where best.pt and result.json go")
    # potop classify train's defaults (classifier_options.h: Hugging Face's Trainer's, run_glue's batch)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, default=0, help="0: epochs x batches per epoch")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--min-lr", type=float, default=0.0)
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.999)
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--eval-interval", type=int, default=0, help="0: one epoch")
    p.add_argument("--patience", type=int, default=3, help="0: never stop early")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--dropout", type=float, default=None, help="the body's dropout (default: BERT_DIR's)")
    p.add_argument("--classifier-dropout", type=float, default=0.1)
    p.add_argument("--threads", type=int, default=0, help="0: torch's default")
    p.add_argument("--log-interval", type=int, default=10)
    p.add_argument("--init-head", default="", help="a potop classifier checkpoint (.safetensors) whose "
                   "classifier.weight/bias start the head instead of a fresh draw: with no dropout the run then "
                   "follows potop's step by step (a check of the recipe)")
    a = p.parse_args(argv)
    for name in ("epochs", "batch_size"):
        if getattr(a, name) <= 0:
            raise Fail(f"--{name.replace('_', '-')} must be positive (got {getattr(a, name)})")
    for name in ("steps", "warmup", "eval_interval", "patience", "threads"):
        if getattr(a, name) < 0:
            raise Fail(f"--{name.replace('_', '-')} must be >= 0 (got {getattr(a, name)})")
    if not (a.lr > 0 and 0 <= a.min_lr <= a.lr):
        raise Fail(f"--lr {a.lr} / --min-lr {a.min_lr}: need 0 <= min-lr <= lr, lr > 0")
    for name in ("dropout", "classifier_dropout"):
        v = getattr(a, name)
        if v is not None and not 0 <= v < 1:
            raise Fail(f"--{name.replace('_', '-')} must be in [0, 1) (got {v})")
    return a


def main(argv) -> int:
    a = parse(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    config, tensors, sp = load_body(a.init_from)
    train, dev = read_tsv(a.data, "data"), read_tsv(a.dev, "dev")
    labels = sorted({label for label, _, _ in train})
    if len(labels) < 2:
        raise Fail(f"--data {a.data}: every example has the label '{labels[0]}'; a classifier needs two classes")
    index = {label: k for k, label in enumerate(labels)}
    for label, _, n in dev:
        if label not in index:
            raise Fail(f"--dev {a.dev}:{n}: label '{label}' was never seen in training (the classes: {', '.join(labels)})")
    body = dict(torch_bert.model_config(config))
    if body["vocab_size"] != sp.get_piece_size() + 1:
        raise Fail(f"--init-from {a.init_from}: vocab_size {body['vocab_size']} is not the tokenizer's "
                   f"{sp.get_piece_size()} + [MASK]")
    if a.dropout is not None:
        body["dropout"] = a.dropout
    train_rows, train_cut = encode_rows(sp, [t for _, t, _ in train], body["block_size"], a.data)
    dev_rows, dev_cut = encode_rows(sp, [t for _, t, _ in dev], body["block_size"], a.dev)
    train_classes = [index[label] for label, _, _ in train]
    dev_classes = [index[label] for label, _, _ in dev]

    B = a.batch_size
    per_epoch = (len(train) + B - 1) // B
    a.steps = a.steps or max(1, per_epoch * a.epochs)
    a.eval_interval = a.eval_interval or per_epoch

    torch.manual_seed(a.seed)
    model = BertClassifier(body, len(labels), a.classifier_dropout)
    model.body.load_numpy(tensors)
    with torch.no_grad():  # potop's head init: N(0, 0.02) weights, zero bias
        model.classifier.weight.normal_(0.0, 0.02)
        model.classifier.bias.zero_()
        if a.init_head:
            head = load_head(a.init_head, tuple(model.classifier.weight.shape))
            model.classifier.weight.copy_(torch.from_numpy(head["classifier.weight"].astype(np.float32)))
            model.classifier.bias.copy_(torch.from_numpy(head["classifier.bias"].astype(np.float32)))
    # lm_head.bias is the masked-LM head's: loaded with the body, unused by the classifier.
    params = [(n, p) for n, p in model.named_parameters() if n != "body.lm_head.bias"]
    model.body.lm_head.bias.requires_grad_(False)
    optimizer = torch.optim.AdamW(
        [{"params": [p for _, p in params if torch_gpt.is_decayed(p)], "weight_decay": a.weight_decay},
         {"params": [p for _, p in params if not torch_gpt.is_decayed(p)], "weight_decay": 0.0}],
        lr=a.lr, betas=(a.beta1, a.beta2), eps=a.eps, foreach=False)
    log = sys.stderr
    print(f"data: {a.data}: {len(train)} examples, {len(labels)} classes; {a.dev}: {len(dev)} examples; "
          f"vocabulary {sp.get_piece_size()}", file=log)
    for file, cut in ((a.data, train_cut), (a.dev, dev_cut)):
        if cut:
            print(f"note: {file}: {cut} texts longer than the block ({body['block_size']} tokens) are cut to it",
                  file=log)
    print(f"model: torch BERT {body['n_layer']}x{body['n_embd']} + head: "
          f"{sum(p.numel() for _, p in params)} parameters; {per_epoch} batches per epoch, {a.steps} steps",
          file=log)

    os.makedirs(a.out, exist_ok=True)
    batches = EpochBatches(len(train), B, hash64(a.seed, 1))
    start = time.time()
    best, best_step, stale, step = -1.0, 0, 0, 0
    model.train()
    while True:
        if step % a.eval_interval == 0 or step == a.steps:
            acc = accuracy(model, dev_rows, dev_classes, B)
            better = acc > best  # potop's score is 1 - accuracy, lower wins: a tie is not better
            if better:
                best, best_step, stale = acc, step, 0
                torch.save(model.state_dict(), os.path.join(a.out, "best.pt"))
            else:
                stale += 1
            print(f"eval step {step}: dev_accuracy {100 * acc:.2f}{' (best)' if better else ''} "
                  f"[{time.time() - start:.0f}s]", file=log, flush=True)
        if step == a.steps:
            break
        if a.patience > 0 and stale >= a.patience:
            print(f"early stop at step {step} of {a.steps}: {stale} evaluations without a better score "
                  f"(--patience {a.patience})", file=log)
            break
        picked = batches.at(step)
        tokens, lengths = pad(train_rows, picked)
        loss = F.cross_entropy(model(tokens, lengths), torch.tensor([train_classes[i] for i in picked]))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = float(torch.nn.utils.clip_grad_norm_([p for _, p in params], a.grad_clip)) if a.grad_clip > 0 else 0.0
        lr = lr_at(step, a)
        torch_gpt.set_lr(optimizer, lr)
        if not (math.isfinite(float(loss)) and math.isfinite(norm)):
            raise Fail(f"step {step + 1}: the loss ({float(loss)}) or the gradient norm ({norm}) is not finite")
        optimizer.step()
        step += 1
        if step % a.log_interval == 0:
            print(f"step {step}/{a.steps} | loss {float(loss):.4f} | lr {lr:.2e}", file=log, flush=True)
    result = {"dev_accuracy": best, "best_step": best_step, "steps": step, "seconds": round(time.time() - start, 1)}
    with open(os.path.join(a.out, "result.json"), "w") as f:
        json.dump(result, f)
        f.write("\n")
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Fail as e:
        print(f"torch_classify: {e}", file=sys.stderr)
        sys.exit(1)
